"""Verifying findings: for each one, replay the original around it and the twin (the same file
with only that finding's fix), then judge and explain."""
from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Sequence

import libcst as cst

from torchmemlint import api, engine
from torchmemlint.config import UsageError
from torchmemlint.diagnostics import Diagnostic, FileError
from torchmemlint.files import read_source
from torchmemlint.fix import apply_fixes
from torchmemlint.notebooks import is_notebook, read_notebook
from torchmemlint.rules import RULES_BY_CODE
from torchmemlint.verify.drive import phase_of
from torchmemlint.verify.frameworks import FRAMEWORKS, framework_class, missing_framework
from torchmemlint.verify.instrument import (
    InstrumentError, IterationScope, calling_loop, find_iteration_scope, instrument, scope_of_span, statement_scope,
)
from torchmemlint.verify.runner import Limits, ReplayServer, RunOutcome, RunRequest
from torchmemlint.verify.verdict import (
    CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, INCONCLUSIVE, NON_MEMORY_COSTS, ONE_TIME_RULES,
    PROJECTED_STEPS, WORKER_RULES, Judgement, heap_disturbed, inconclusive, judge, judge_alone, judge_one_time, judge_workers,
    meter_of, paired_growth, raises_for_finding, retained_per_iteration, series,
)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    iterations: int = 8  # measured iterations, after the warm-up
    warmup: int = 2
    script_args: tuple[str, ...] = ()
    limits: Limits = Limits()

    @property
    def cap(self) -> int:
        return self.warmup + self.iterations


@dataclass
class RunSummary:
    """One replay, as reported: status, iterations completed, and the per-iteration numbers of
    the meter the verdict used (index k = end of iteration k, 0 = entry into the loop)."""

    status: str
    iterations: int
    wall_s: float
    live_bytes: list[int]
    peak_bytes: list[int]
    error: str = ""

    def to_json(self) -> dict:
        return {"status": self.status, "iterations": self.iterations, "wall_s": round(self.wall_s, 3),
                "live_bytes": self.live_bytes, "peak_bytes": self.peak_bytes, "error": self.error}


@dataclass
class VerifyResult:
    """The verdict on one finding (``docs/verification.md`` documents every field)."""

    diagnostic: Diagnostic
    verdict: str
    explanation: str
    meter: str = "live-storage"
    device: str = ""
    scope: Optional[IterationScope] = None
    judgement: Optional[Judgement] = None
    original: Optional[RunSummary] = None
    twin: Optional[RunSummary] = None
    retained_by: list[dict] = field(default_factory=list)
    created_at: list[dict] = field(default_factory=list)
    live_storage: dict = field(default_factory=dict)  # CUDA runs: the live-storage meter's figures
    retained_bytes_per_iteration: Optional[int] = None  # the original's survivors
    twin_origin: str = ""  # "fix" (the finding's own), "shipped" (NAME.correct.py), "file" (--twin), "" (no twin)
    twin_path: Optional[str] = None  # the hand-written twin's file ("shipped", "file")
    allocation_sites: list[dict] = field(default_factory=list)  # CUDA: where the surviving blocks were allocated

    def to_json(self) -> dict:
        d = self.diagnostic
        j = self.judgement or inconclusive("not-repeating", self.explanation)
        return {
            "path": d.path, "line": d.line, "column": d.column + 1, "code": d.code, "name": d.name,
            "message": d.message, "verdict": self.verdict,
            "bytes_per_iteration": j.bytes_per_iteration, "peak_excess_bytes": j.peak_excess_bytes,
            "projected_bytes": j.projected_bytes, "projected_iterations": PROJECTED_STEPS,
            "original_bytes_per_iteration": j.original_bytes_per_iteration,
            "twin_bytes_per_iteration": j.twin_bytes_per_iteration,
            "heap_bytes_per_iteration": j.heap_bytes_per_iteration, "growth_meter": j.growth_meter,
            "allocated_excess_bytes": j.allocated_excess_bytes,
            "iterations": len(j.measured), "measured_iterations": j.measured,
            "meter": self.meter, "device": self.device, "explanation": self.explanation,
            "scope": ({"kind": self.scope.kind, "line": self.scope.line, "name": self.scope.name}
                      if self.scope else None),
            "fix": ({"description": d.fix.description, "safe": d.fix.safe} if d.fix else None),
            "twin_origin": self.twin_origin or None,
            "twin_path": self.twin_path,
            "live_excess_bytes": j.live_excess_bytes,
            "original": self.original.to_json() if self.original else None,
            "twin": self.twin.to_json() if self.twin else None,
            "retained_bytes_per_iteration": self.retained_bytes_per_iteration,
            "retained_by": self.retained_by, "created_at": self.created_at, "live_storage": self.live_storage,
            "inconclusive_reason": j.inconclusive_reason, "memory": j.memory,
            "nodes_per_iteration": j.nodes_per_iteration, "saved_tensors_per_iteration": j.saved_tensors_per_iteration,
            "native_bytes_per_iteration": j.native_bytes_per_iteration, "one_time_bytes": j.one_time_bytes,
            "ms_per_iteration": j.ms_per_iteration, "twin_ms_per_iteration": j.twin_ms_per_iteration,
            "grad_norm": j.grad_norm, "twin_grad_norm": j.twin_grad_norm, "fix_error": j.fix_error,
            "alone_verdict": j.alone_verdict, "workers": j.workers, "allocation_sites": self.allocation_sites,
        }


# A script's hand-written twin, shipped next to it (as the runnable fixtures' are): NAME.correct.py.
SHIPPED_TWIN_SUFFIX = ".correct.py"


@dataclass(frozen=True)
class FileFindings:
    """One file's text (as LibCST decoded it: the text the fixes' positions refer to) and the
    findings to verify in it. ``twin_text``: a fixed version of the file written by hand, from
    ``twin_path``: given with ``--twin`` (the twin of the findings that have no fix of their
    own), or ``shipped`` next to the file as ``NAME.correct.py`` (the twin of every finding)."""

    path: str
    text: str
    diagnostics: Sequence[Diagnostic]
    twin_text: Optional[str] = None
    twin_path: Optional[str] = None
    shipped: bool = False

    @classmethod
    def from_source(cls, path: str, source: bytes, diagnostics: Sequence[Diagnostic],
                    twin_source: Optional[bytes] = None, twin_path: Optional[str] = None,
                    shipped: bool = False) -> "FileFindings":
        twin_text = cst.parse_module(twin_source).code if twin_source is not None else None
        return cls(path, cst.parse_module(source).code, diagnostics, twin_text, twin_path, shipped)

    def twin_of(self, diagnostic: Diagnostic) -> tuple[Optional[str], str]:
        """The twin's text and where it comes from ("shipped", "fix", "file"), or (None, "")."""
        if self.shipped and self.twin_text is not None:
            return self.twin_text, "shipped"
        if diagnostic.fix is not None:
            fixed, _ = apply_fixes(self.text, [diagnostic.fix])
            return fixed, "fix"
        if self.twin_text is not None:
            return self.twin_text, "file"
        return None, ""

    def twin_label(self) -> str:
        """The hand-written twin as the output names it: ``twin: PATH (shipped)``, or ""."""
        if self.twin_path is None:
            return ""
        return f"twin: {self.twin_path} ({'shipped' if self.shipped else '--twin'})"


def shipped_twin(path: str) -> Optional[str]:
    """``NAME.correct.py`` next to ``NAME.py``, if there is one."""
    if not path.endswith(".py") or path.endswith(SHIPPED_TWIN_SUFFIX):
        return None
    twin = path[:-len(".py")] + SHIPPED_TWIN_SUFFIX
    return twin if os.path.isfile(twin) else None


def verify_paths(paths: Sequence[str], settings: Settings, progress: Optional[Progress] = None,
                 server: Optional[ReplayServer] = None, twin: Optional[str] = None,
                 confirm: Optional[Callable[[Sequence[FileFindings]], None]] = None,
                 **selection) -> tuple[list[VerifyResult], list[FileError]]:
    """Check the files under ``paths`` (``selection`` as for ``api.plan``: select, ignore,
    config ...) and verify every finding. Files that cannot be checked come back as errors.
    ``twin``: a fixed copy of the one script checked, for the findings without a fix.
    ``confirm``: called with the files to replay before anything runs; it raises to stop."""
    files: list[FileFindings] = []
    errors: list[FileError] = []
    tasks = list(api.plan(paths, **selection))
    twin_source: Optional[bytes] = None
    if twin is not None:
        if len(tasks) != 1:
            raise UsageError(f"--twin is a fixed copy of one script, but {len(tasks)} files are to be checked")
        twin_source = _read_twin(twin, tasks[0].max_file_size, "--twin ")
    # A shipped twin whose original is in the run is that original's twin, not a script of its own.
    planned = {os.path.abspath(task.path) for task in tasks}
    tasks = [task for task in tasks if not (task.path.endswith(SHIPPED_TWIN_SUFFIX) and os.path.abspath(
        task.path[:-len(SHIPPED_TWIN_SUFFIX)] + ".py") in planned)]
    for task in tasks:
        source = read_source(task.path, task.max_file_size)
        if isinstance(source, FileError):
            errors.append(source)
            continue
        if is_notebook(task.path):  # replayed as its code cells in order, IPython syntax as check reads it
            notebook = read_notebook(source)
            if isinstance(notebook, str):
                errors.append(FileError(task.path, notebook))
                continue
            source = notebook.source
        diagnostics, file_errors = engine.check_source(source, task.path, [RULES_BY_CODE[c] for c in task.rule_codes])
        errors.extend(file_errors)
        if not diagnostics:
            continue
        file_twin, twin_path, shipped = twin_source, twin, False
        shipped_path = shipped_twin(task.path) if twin is None else None  # (--twin, given by hand, wins)
        if shipped_path is not None:
            file_twin, twin_path, shipped = _read_twin(shipped_path, task.max_file_size, ""), shipped_path, True
        try:
            files.append(FileFindings.from_source(task.path, source, diagnostics, file_twin, twin_path, shipped))
        except cst.ParserSyntaxError as error:
            raise UsageError(f"{'--twin ' if not shipped else ''}{twin_path}: syntax error: {error.message}") from None
    if files and confirm is not None:
        confirm(files)
    return verify_findings(files, settings, progress, server), errors


def _read_twin(path: str, max_file_size: int, option: str) -> bytes:
    read = read_source(path, max_file_size)
    if isinstance(read, FileError):
        raise UsageError(f"{option}{path}: {read.message}")
    return read


def verify_findings(files: Iterable[FileFindings], settings: Settings, progress: Optional[Progress] = None,
                    server: Optional[ReplayServer] = None) -> list[VerifyResult]:
    """Replay every finding of ``files``. Without a running ``server``, one is started if
    anything replays, and stopped at the end."""
    say = progress or (lambda message: None)
    planned = [(file, diagnostic) for file in files for diagnostic in file.diagnostics]
    results: list[VerifyResult] = []
    own_server = server is None
    # Findings in the same scope of the same file share the original's replay.
    originals: dict[tuple[str, IterationScope], RunOutcome] = {}
    missing: dict[str, Optional[str]] = {}  # per file: a framework it imports that is not installed
    try:
        for number, (file, diagnostic) in enumerate(planned, 1):
            where = f"[{number}/{len(planned)}] {diagnostic.path}:{diagnostic.line} {diagnostic.code}"
            if file.path not in missing:
                missing[file.path] = missing_framework(file.text)
            if missing[file.path] is not None:
                package = missing[file.path]
                judgement = inconclusive("framework-not-installed", f"framework not installed: {package} (the script "
                                         f"imports it; `pip install {FRAMEWORKS[package]}` where verify runs, to "
                                         "replay it)")
                results.append(VerifyResult(diagnostic, INCONCLUSIVE, judgement.reason[:1].upper()
                                            + judgement.reason[1:] + ".", judgement=judgement))
                say(f"{where}: not replayed (framework not installed: {package})")
                continue
            try:
                scope = scope_of(file.text, diagnostic)
                original_source = instrument(file.text, scope)
            except InstrumentError as error:
                reason = "not-repeating" if "nothing repeats" in str(error) else "not-instrumentable"
                judgement = inconclusive(reason, f"not replayed: {error}")
                results.append(VerifyResult(diagnostic, INCONCLUSIVE, judgement.reason + ".", judgement=judgement))
                say(f"{where}: not replayed ({error})")
                continue
            if server is None:
                say("starting the replay server (imports torch)")
                server = ReplayServer().__enter__()
            filename = os.path.abspath(file.path)
            # the gradient norm costs a scan of every object per boundary: only in files that need it
            gradients = any(NON_MEMORY_COSTS.get(d.code) == "gradients" for d in file.diagnostics)
            key = (filename, scope, gradients)
            original_request = _request(original_source, filename, settings, scope, gradients=gradients)
            if key not in originals:
                say(f"{where}: replaying the original")
                originals[key] = server.run(original_request, settings.limits)
            twin: Optional[RunOutcome] = None
            twin_error = ""
            twin_text, twin_origin = file.twin_of(diagnostic)
            if twin_text is not None and scope.kind != "workers" and _comparable(originals[key], diagnostic):
                try:
                    twin_source = instrument(twin_text, scope)
                except InstrumentError as error:
                    twin_error = f"the fixed code cannot be replayed ({error})"
                else:
                    which = file.twin_label() if twin_origin != "fix" else "twin (with the fix)"
                    say(f"{where}: replaying the {which}")
                    twin_request = _request(twin_source, filename, settings, scope, explain=False, gradients=gradients)
                    twin = server.run(twin_request, settings.limits)
            result = build_result(diagnostic, scope, originals[key], twin, twin_error, file.text, settings)
            if twin is not None and result.judgement.growth_meter == "graph" and heap_disturbed(result.judgement):
                # one more pair, to price the graph's nodes from the heap rather than the calibration
                say(f"{where}: the native heap moved with other allocations; replaying both again")
                original = server.run(original_request, settings.limits)
                twin = server.run(twin_request, settings.limits)
                result = build_result(diagnostic, scope, original, twin, twin_error, file.text, settings)
            result.twin_origin = twin_origin
            result.twin_path = file.twin_path if twin_origin in ("shipped", "file") else None
            say(f"{where}: {result.verdict}")
            results.append(result)
    finally:
        if own_server and server is not None:
            server.__exit__(None, None, None)
    return results


def scope_of(text: str, diagnostic: Diagnostic) -> IterationScope:
    """What to replay for ``diagnostic``: the flagged statement once for a one-time cost; the
    loop or per-step function the rule named (``Diagnostic.iteration``); else the scope derived
    from the line (``find_iteration_scope``)."""
    if diagnostic.code in ONE_TIME_RULES:
        return statement_scope(text, diagnostic.line)
    if diagnostic.code in WORKER_RULES:
        return IterationScope("workers", 0, diagnostic.line)
    span = diagnostic.iteration
    scope = None
    if span is not None and span.kind in ("for", "while", "function"):
        try:
            scope = scope_of_span(text, span.kind, span.line, span.end_line)
        except InstrumentError:  # a span this file's loops do not match (a `for ... else:`): from the line
            pass
    scope = scope or find_iteration_scope(text, diagnostic.line)
    # a function the file calls by name in a loop: each iteration of that loop is one iteration
    return calling_loop(text, scope) or scope


def _comparable(original: RunOutcome, diagnostic: Diagnostic) -> bool:
    """Whether the original measured anything a twin could be compared with (an out-of-memory
    end counts: the twin shows whether the fix avoids it; so does an error at the flagged line:
    the twin shows whether the fix avoids that)."""
    if raises_for_finding(original, diagnostic.code, diagnostic.line):
        return True
    return len(original.boundaries) > 1 and original.status in ("capped", "finished", "oom")


def _request(source: str, filename: str, settings: Settings, scope: IterationScope, explain: bool = True,
             gradients: bool = False) -> RunRequest:
    if scope.kind == "statement":  # one-shot: boundary 0 before the statement, 1 after it
        return RunRequest(source, filename, settings.script_args, 1, 0, explain, gradients)
    if scope.kind == "workers":  # one-shot: the workers' device memory, watched until it settles
        return RunRequest(source, filename, settings.script_args, 1, 0, False, workers=True)
    return RunRequest(source, filename, settings.script_args, settings.cap, settings.warmup, explain, gradients,
                      phase=phase_of(scope.name))


def _summary(outcome: RunOutcome, meter: str) -> RunSummary:
    numbers = series(outcome, meter)
    error = outcome.end.get("error", {})
    message = f"{error.get('type')}: {error.get('message')}" if error else ""
    if outcome.status in ("crashed", "error") and outcome.stderr_tail and not message:
        message = outcome.stderr_tail.strip().splitlines()[-1]
    return RunSummary(outcome.status, outcome.iterations, outcome.wall_s, numbers.live, numbers.peak, message)


def build_result(diagnostic: Diagnostic, scope: IterationScope, original: RunOutcome, twin: Optional[RunOutcome],
                 twin_error: str, text: str, settings: Settings) -> VerifyResult:
    """The verdict on one finding from its replays, with the figures and the explanation."""
    meter = meter_of(original)
    device = original.start.get("device_name", "")
    if scope.kind == "statement":
        judgement = judge_one_time(original, twin, settings.limits.timeout_s)
    elif scope.kind == "workers":
        judgement = judge_workers(original, settings.limits.timeout_s)
    elif twin_error and original.status in ("capped", "finished"):
        judgement = judge_alone(original, meter, settings.warmup, why=twin_error)
    else:
        judgement = judge(original, twin, settings.warmup, settings.limits.timeout_s, diagnostic.code, diagnostic.line)
    storage_device = "cuda" if meter == "cuda" else "cpu"
    created_at = _created_at(original, storage_device, text)
    result = VerifyResult(
        diagnostic, judgement.verdict, "", meter, device, scope, judgement,
        _summary(original, meter), _summary(twin, meter) if twin else None,
        original.end.get("retained_by", []), created_at,
    )
    if original.end.get("survivors") is not None:
        # on CUDA, in the allocator's 512-byte blocks, comparable with ``memory_allocated``
        result.retained_bytes_per_iteration = retained_per_iteration(original, storage_device, rounded=meter == "cuda")
    result.allocation_sites = original.end.get("allocation_sites", [])
    if meter == "cuda" and judgement.measured and twin is not None and twin.boundaries:
        result.live_storage = _live_storage_figures(original, twin, judgement.measured)
    result.explanation = _explain(result, settings, text)
    return result


def _live_storage_figures(original: RunOutcome, twin: RunOutcome, measured: list[int]) -> dict:
    """On CUDA, the live-storage meter's view of the same replays, raw and rounded to the
    allocator's 512-byte blocks (which is what ``memory_allocated`` counts)."""
    return {label: paired_growth(series(original, "live-storage", "cuda", rounded),
                                 series(twin, "live-storage", "cuda", rounded), measured)
            for label, rounded in (("bytes_per_iteration", False), ("rounded_bytes_per_iteration", True))}


def _created_at(outcome: RunOutcome, device: str, text: str) -> list[dict]:
    """Where the survivors were created: per line, storages and bytes per iteration."""
    by_line: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for group in outcome.end.get("survivors", ()):
        if group["device"] == device:
            by_line[group["line"]][0] += group["storages"]
            by_line[group["line"]][1] += group["bytes"]
    lines = text.splitlines()
    count = max(len(outcome.end.get("survivor_iterations", ())), 1)
    return [{"line": line, "code": lines[line - 1].strip() if 0 < line <= len(lines) else "",
             "storages_per_iteration": storages / count, "bytes_per_iteration": nbytes // count}
            for line, (storages, nbytes) in sorted(by_line.items(), key=lambda item: -item[1][1])]


def _explain(result: VerifyResult, settings: Settings, text: str) -> str:
    j = result.judgement
    assert j is not None
    parts = [j.reason[:1].upper() + j.reason[1:] + "."]
    kept = j.verdict == CONFIRMED_GROWTH or j.alone_verdict == CONFIRMED_GROWTH
    if j.memory and kept:
        parts.append(_memory_sentence(j, result.meter))
    if j.verdict == CONFIRMED_GROWTH and j.projected_bytes:
        parts.append(f"About {_size(j.projected_bytes)} over {PROJECTED_STEPS:,} iterations.")
    if (j.verdict != CONFIRMED_GROWTH and j.original_bytes_per_iteration
            and j.original_bytes_per_iteration == j.twin_bytes_per_iteration):
        parts.append(f"Both the original and the fixed twin keep {j.original_bytes_per_iteration:,} B per "
                     "iteration: the fix does not change what is kept.")
    if j.verdict == CONFIRMED_PEAK_EXCESS and j.live_excess_bytes and j.live_excess_bytes > 0:
        parts.append(f"Between iterations it holds {j.live_excess_bytes:,} B more than with the fix, "
                     "without growing.")
    if j.allocated_excess_bytes and j.allocated_excess_bytes > 0:
        parts.append(f"Each iteration allocates {j.allocated_excess_bytes:,} B more than with the fix.")
    if not _reached_scope(result):
        parts.append(f"(The replayed scope: {_describe(result.scope)}; code the script never runs, such as a "
                     "function it does not call, cannot be replayed.)")
        owner = framework_class(text, result.scope.line) if result.scope is not None else None
        if owner is not None:
            parts.append(owner.hint()[:1].upper() + owner.hint()[1:] + ".")
    if j.verdict == CONFIRMED_GROWTH and j.growth_meter == "graph" and j.saved_tensors_per_iteration:
        parts.append(f"The kept graphs also save {j.saved_tensors_per_iteration} tensors per iteration.")
    if result.retained_by and kept:
        top = result.retained_by[0]
        parts.append(f"Kept alive by `{top['name']}` ({top['storages']} storages, {top['bytes']:,} B created in "
                     f"measured iterations; e.g. `{top['example']}`).")
    if result.created_at and kept:
        where = result.created_at[0]
        parts.append(f"Created at line {where['line']} (`{where['code']}`), {where['bytes_per_iteration']:,} B "
                     "per iteration.")
    if result.allocation_sites and kept:
        sites = "; ".join(f"{site['file']}:{site['line']} in `{site['function']}` ({site['bytes_per_iteration']:,} B "
                          f"per iteration, {site['blocks']} blocks)" for site in result.allocation_sites[:3])
        parts.append(f"Allocated at (the CUDA allocator's history of the surviving blocks): {sites}.")
    if result.live_storage:
        per = "once" if result.scope is not None and result.scope.kind == "statement" else "per iteration"
        parts.append(f"Live-storage meter: {result.live_storage['bytes_per_iteration']} B {per} "
                     f"({result.live_storage['rounded_bytes_per_iteration']} B in 512-B blocks).")
    return " ".join(parts)


def _memory_sentence(j: Judgement, meter: str) -> str:
    if j.growth_meter == "graph":
        return ("Host memory: a graph's nodes are C++ objects on the host heap, on every device; the device keeps "
                "only what the storages show.")
    if j.memory == "device":
        return "Device memory (the CUDA allocator's count)."
    if j.growth_meter == "python-heap":
        return "Host memory (Python objects)."
    if meter == "cuda":
        return "Host memory (CPU tensor storages), which the CUDA allocator does not count."
    return ("Host memory in this CPU replay (tensor storages): on a GPU, the storages of device tensors are "
            "device memory.")


def _reached_scope(result: VerifyResult) -> bool:
    """False when the original ended or timed out without entering the replayed scope."""
    return result.original is None or result.original.status not in ("finished", "timeout") or bool(
        result.original.live_bytes) or (result.scope is not None and result.scope.kind == "workers")


def _describe(scope: Optional[IterationScope]) -> str:
    if scope is None:
        return "none"
    if scope.kind == "function":
        return f"each call of `{scope.name}()` (line {scope.line})"
    if scope.kind == "statement":
        return f"the statement at line {scope.line}, once"
    if scope.kind == "workers":
        return "the whole script, its DataLoader workers watched"
    return f"the `{scope.kind}` loop at line {scope.line}"


def _size(nbytes: int) -> str:
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"
