"""``verify --nproc-per-node N``: each replay (an original or a twin) is one ``torch.distributed.run``
launch of N ranks (``verify/rank.py``); every rank replays the same instrumented script with the
same iteration cap, so the ranks stop at the same boundary and no collective is left unmatched.
The script picks its backend (NCCL on CUDA, gloo on the CPU); ``--device cpu`` hides the GPUs.

Each rank is judged on its own, exactly as a single-process replay (``verifier.build_result``):
``verify_paths`` runs once per rank over a view of the launches that returns that rank's
outcomes (the launches themselves run once, in the first pass). Then per finding:

- the verdict: confirmed-growth if any rank confirms growth, else confirmed-peak-excess if any
  rank confirms a peak excess, else not-reproduced if every rank says so, else inconclusive;
- combined figures: growth per iteration summed over the ranks, the highest per-rank peak, and
  the rank imbalance (the spread of the original's own growth per iteration across the ranks);
- a replay that times out (a collective that some rank never reaches) names, for each rank that
  had not ended, the iteration it reached and the line it was waiting at (its Python stack,
  dumped on SIGUSR1 before the launch is ended).

Nothing here imports torch; the ranks do.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from torchmemlint.diagnostics import Diagnostic, FileError
from torchmemlint.verify.runner import Limits, ReplayError, RunOutcome, RunRequest, _collect, _server_environment, \
    replay_spec
from torchmemlint.verify.verdict import CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, INCONCLUSIVE, NOT_REPRODUCED, VERDICTS
from torchmemlint.verify.verifier import Settings, VerifyResult, verify_paths

Progress = Callable[[str], None]
# Time the ranks get to write their stacks after SIGUSR1, and torchrun to stop its workers.
_STACK_DUMP_WAIT_S = 1.0
_TERMINATE_WAIT_S = 10.0
_LAUNCHER_LOG_TAIL = 2000


class TorchrunLauncher:
    """Runs replays under ``torch.distributed.run`` with ``nproc`` ranks; a context manager.
    ``launch`` runs a request once and keeps its outcomes; ``rank(r)`` is a replay server
    (``run(request, limits)``) that answers with rank r's outcome of that launch."""

    def __init__(self, nproc: int) -> None:
        if nproc < 1:
            raise ValueError("--nproc-per-node must be at least 1")
        self.nproc = nproc
        self._scratch = ""
        self._launches: dict[tuple[RunRequest, Limits], list[RunOutcome]] = {}

    def __enter__(self) -> "TorchrunLauncher":
        if importlib.util.find_spec("torch") is None:
            raise ReplayError("`torchmemlint verify` needs PyTorch: pip install 'torchmemlint[verify]'")
        self._scratch = tempfile.mkdtemp(prefix="torchmemlint-torchrun-")
        return self

    def __exit__(self, *exc_info: Any) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)

    def rank(self, rank: int) -> "RankView":
        return RankView(self, rank)

    def launch(self, request: RunRequest, limits: Limits) -> list[RunOutcome]:
        """Each rank's outcome of ``request``, launched the first time it is asked for."""
        key = (request, limits)
        if key not in self._launches:
            self._launches[key] = self._launch(request, limits)
        return self._launches[key]

    def _launch(self, request: RunRequest, limits: Limits) -> list[RunOutcome]:
        run_dir = tempfile.mkdtemp(prefix="run-", dir=self._scratch)
        workdir = os.path.join(run_dir, "cwd")
        os.mkdir(workdir)
        script = os.path.join(run_dir, "script.py")
        with open(script, "w", encoding="utf-8") as file:
            file.write(request.source)
        files = {"results.jsonl": os.path.join(run_dir, "results.{rank}.jsonl"),
                 "stdout": os.path.join(run_dir, "stdout.{rank}"), "stderr": os.path.join(run_dir, "stderr.{rank}")}
        spec = replay_spec(request, limits, {"script.py": script, **files}, workdir)
        spec_path = os.path.join(run_dir, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as file:
            json.dump(spec, file)
        environment = _server_environment()
        if limits.device == "cpu":
            environment["CUDA_VISIBLE_DEVICES"] = ""
        log_path = os.path.join(run_dir, "torchrun.log")
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={self.nproc}",
                   "--max-restarts=0", "--monitor-interval=0.1", "-m", "torchmemlint.verify.rank", spec_path]
        started = time.monotonic()
        with open(log_path, "w", encoding="utf-8") as log:
            process = subprocess.Popen(command, cwd=workdir, env=environment, stdin=subprocess.DEVNULL,
                                       stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            timed_out = False
            try:
                process.wait(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                self._stop(process, run_dir)
        wall_s = time.monotonic() - started
        with open(log_path, encoding="utf-8", errors="replace") as log:
            log_tail = log.read()[-_LAUNCHER_LOG_TAIL:]
        outcomes = []
        lines = request.source.splitlines()
        for rank in range(self.nproc):
            paths = {name: template.format(rank=rank) for name, template in files.items()}
            for name in ("stdout", "stderr"):
                if not os.path.exists(paths[name]):  # the rank never started
                    open(paths[name], "w").close()
            outcome = _collect(paths, False, {"exit": process.returncode}, request.cap)
            if timed_out and outcome.status == "crashed":  # this rank had not ended
                outcome = _collect(paths, True, {}, request.cap)
                line = _waiting_line(paths["stderr"], request.filename)
                code = f" (`{lines[line - 1].strip()}`)" if 0 < line <= len(lines) else ""
                outcome.end["error"] = {"type": "timeout", "line": line,
                                        "message": f"waiting at line {line}{code}" if line else "waiting"}
            elif outcome.status == "crashed" and not outcome.stderr_tail.strip():
                outcome.stderr_tail = log_tail  # it died before its output was redirected: torchrun's words
            outcome.wall_s = wall_s
            outcomes.append(outcome)
        shutil.rmtree(run_dir, ignore_errors=True)
        return outcomes

    @staticmethod
    def _stop(process: subprocess.Popen, run_dir: str) -> None:
        """Stacks from every rank still running, then the launch ends: torchrun stops its
        workers on SIGTERM; whatever is left of a worker's session is killed."""
        pids = _rank_pids(run_dir)
        for pid in pids:
            _signal(pid, signal.SIGUSR1)
        time.sleep(_STACK_DUMP_WAIT_S)
        _signal(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=_TERMINATE_WAIT_S)
        except subprocess.TimeoutExpired:
            pass
        for group in (*pids, process.pid):
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        process.wait()


class RankView:
    """One rank's side of the launches: what ``verifier.verify_findings`` takes for a server."""

    def __init__(self, launcher: TorchrunLauncher, rank: int) -> None:
        self._launcher = launcher
        self._rank = rank

    def run(self, request: RunRequest, limits: Limits) -> RunOutcome:
        return self._launcher.launch(request, limits)[self._rank]


def _rank_pids(run_dir: str) -> list[int]:
    """The pids the ranks wrote in their results files' start records."""
    pids = []
    for name in sorted(os.listdir(run_dir)):
        if name.startswith("results.") and name.endswith(".jsonl"):
            with open(os.path.join(run_dir, name), encoding="utf-8") as results:
                first = results.readline()
            try:
                pids.append(int(json.loads(first)["pid"]))
            except (ValueError, KeyError, TypeError):
                continue
    return pids


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except (ProcessLookupError, PermissionError):
        pass


_STACK_LINE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _waiting_line(stderr_path: str, filename: str) -> int:
    """The innermost line of the user's script in the last stack the rank dumped, or 0."""
    with open(stderr_path, encoding="utf-8", errors="replace") as stderr:
        text = stderr.read()
    start = text.rfind("most recent call first")
    if start < 0:
        return 0
    for line in text[start:].splitlines():
        match = _STACK_LINE.match(line)
        if match and match.group("file") == filename:
            return int(match.group("line"))
    return 0


@dataclass
class DistributedResult:
    """The verdict on one finding over all ranks; ``ranks[r]`` is rank r's own."""

    diagnostic: Diagnostic
    verdict: str
    explanation: str
    ranks: list[VerifyResult]
    bytes_per_iteration: Optional[int] = None  # summed over the ranks (paired with the twin)
    peak_bytes: Optional[int] = None  # the highest peak of any rank (original)
    imbalance_bytes_per_iteration: Optional[int] = None  # the original's growth: highest rank minus lowest
    wall_s: float = 0.0
    waiting: list[dict] = field(default_factory=list)  # ranks that had not ended at a timeout

    def to_json(self) -> dict:
        d = self.diagnostic
        return {
            "path": d.path, "line": d.line, "column": d.column + 1, "code": d.code, "name": d.name,
            "message": d.message, "verdict": self.verdict, "explanation": self.explanation,
            "nproc_per_node": len(self.ranks),
            "combined": {"bytes_per_iteration": self.bytes_per_iteration, "peak_bytes": self.peak_bytes,
                         "imbalance_bytes_per_iteration": self.imbalance_bytes_per_iteration,
                         "wall_s": round(self.wall_s, 3)},
            "waiting": self.waiting,
            "ranks": [{"rank": rank, **result.to_json()} for rank, result in enumerate(self.ranks)],
        }


def verify_distributed(paths: Sequence[str], settings: Settings, nproc: int, progress: Optional[Progress] = None,
                       twin: Optional[str] = None, confirm: Optional[Callable[..., None]] = None,
                       **selection: Any) -> tuple[list[DistributedResult], list[FileError]]:
    """``verify_paths`` with every replay launched under torchrun on ``nproc`` ranks (``confirm``:
    asked once, before the first launch)."""
    say = progress or (lambda message: None)
    per_rank: list[list[VerifyResult]] = []
    errors: list[FileError] = []
    with TorchrunLauncher(nproc) as launcher:
        for rank in range(nproc):
            # The first pass launches every replay; the others read their rank's outcomes.
            results, file_errors = verify_paths(
                paths, settings, (lambda message: say(f"{message} [{nproc} ranks under torchrun]")) if rank == 0 else None,
                server=launcher.rank(rank), twin=twin, confirm=confirm if rank == 0 else None,
                **selection)  # type: ignore[arg-type]
            per_rank.append(results)
            if rank == 0:
                errors = file_errors
    return [combine([results[index] for results in per_rank]) for index in range(len(per_rank[0]))], errors


def combine(ranks: list[VerifyResult]) -> DistributedResult:
    """One finding's per-rank results as one."""
    verdicts = [result.verdict for result in ranks]
    if CONFIRMED_GROWTH in verdicts:
        verdict = CONFIRMED_GROWTH
    elif CONFIRMED_PEAK_EXCESS in verdicts:
        verdict = CONFIRMED_PEAK_EXCESS
    elif all(v == NOT_REPRODUCED for v in verdicts):
        verdict = NOT_REPRODUCED
    else:
        verdict = INCONCLUSIVE
    judged = [result.judgement for result in ranks]
    growth = [j.bytes_per_iteration for j in judged if j is not None and j.bytes_per_iteration is not None]
    own = [j.original_bytes_per_iteration for j in judged if j is not None and j.original_bytes_per_iteration is not None]
    peaks = [max(r.original.peak_bytes[1:] or [0]) for r in ranks if r.original is not None and r.original.peak_bytes]
    result = DistributedResult(
        ranks[0].diagnostic, verdict, "", ranks,
        bytes_per_iteration=sum(growth) if len(growth) == len(ranks) else None,
        peak_bytes=max(peaks) if peaks else None,
        imbalance_bytes_per_iteration=max(own) - min(own) if len(own) == len(ranks) else None,
        wall_s=max((r.original.wall_s for r in ranks if r.original is not None), default=0.0))
    result.waiting = _waiting(ranks)
    result.explanation = _explain(result)
    return result


def _waiting(ranks: list[VerifyResult]) -> list[dict]:
    waiting = []
    for rank, result in enumerate(ranks):
        original = result.original
        if original is not None and original.status == "timeout":
            # the launcher's "timeout: waiting at line N (`code`)"
            waiting.append({"rank": rank, "iterations": original.iterations,
                            "where": original.error.partition(": ")[2] or "waiting"})
    return waiting


def _explain(result: DistributedResult) -> str:
    parts = []
    confirming = [rank for rank, r in enumerate(result.ranks) if r.verdict == result.verdict]
    if result.verdict in (CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS):
        others = [rank for rank in range(len(result.ranks)) if rank not in confirming]
        parts.append(f"{result.verdict} on rank{'s' if len(confirming) > 1 else ''} "
                     f"{', '.join(map(str, confirming))}"
                     + (f"; not on rank{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}." if others
                        else " (every rank)."))
    if result.bytes_per_iteration is not None:
        parts.append(f"Combined: {result.bytes_per_iteration:,} B per iteration more than with the fix over "
                     f"{len(result.ranks)} ranks; peak {result.peak_bytes or 0:,} B on the highest rank.")
    if result.imbalance_bytes_per_iteration:
        own = [r.judgement.original_bytes_per_iteration for r in result.ranks]
        top = own.index(max(own))
        parts.append(f"Rank imbalance: rank {top} keeps {result.imbalance_bytes_per_iteration:,} B per iteration "
                     "more than the lowest rank.")
    for waiting in result.waiting:
        parts.append(f"Rank {waiting['rank']} had not ended at the timeout, after iteration {waiting['iterations']}: "
                     f"{waiting['where']} (a collective that another rank never reached).")
    return " ".join(parts)


def _bytes(value: Optional[int]) -> str:
    return "-" if value is None else f"{value:,} B"


def write_table(results: Sequence[DistributedResult], stream: Any) -> None:
    """Per finding: the combined verdict and figures, one line per rank, the explanations."""
    for result in results:
        d = result.diagnostic
        stream.write(f"{d.path}:{d.line} {d.code}  {result.verdict}  per iteration: {_bytes(result.bytes_per_iteration)} "
                     f"combined, {_bytes(result.imbalance_bytes_per_iteration)} rank imbalance; "
                     f"peak {_bytes(result.peak_bytes)}; {result.wall_s:.1f} s\n")
        for rank, ranked in enumerate(result.ranks):
            j, original = ranked.judgement, ranked.original
            own = j.original_bytes_per_iteration if j else None
            peak = max(original.peak_bytes[1:] or [0]) if original and original.peak_bytes else None
            stream.write(f"    rank {rank}: {ranked.verdict}, {_bytes(j.bytes_per_iteration if j else None)} per iteration "
                         f"more than the twin (the original alone: {_bytes(own)}), peak {_bytes(peak)}, "
                         f"{len(j.measured) if j else 0} measured iterations ({ranked.meter} meter on "
                         f"{ranked.device or '-'})\n")
        stream.write(textwrap.fill(result.explanation, width=100, initial_indent="    ", subsequent_indent="    ") + "\n")
        for rank, ranked in enumerate(result.ranks):
            if ranked.verdict != NOT_REPRODUCED:
                stream.write(textwrap.fill(f"rank {rank}: {ranked.explanation}", width=100, initial_indent="    ",
                                           subsequent_indent="      ") + "\n")
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in VERDICTS}
    stream.write(f"\n{len(results)} finding(s) on {len(results[0].ranks) if results else 0} ranks: "
                 + (", ".join(f"{n} {verdict}" for verdict, n in counts.items() if n) or "none") + "\n")


def write_json(results: Sequence[DistributedResult], stream: Any) -> None:
    json.dump([result.to_json() for result in results], stream, indent=2)
    stream.write("\n")
