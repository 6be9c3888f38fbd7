"""From two replays (the original and its twin with the fix) to a verdict. Pure functions over
the measurements; no torch.

The window: the iterations after the warm-up that both replays completed. For each of them the
*paired difference* original minus twin of (a) how much live memory the iteration added, (b)
its peak. Their medians are ``bytes_per_iteration`` and ``peak_excess_bytes``; the live-storage
meter is exact, so on the CPU they are exact byte counts.

- ``confirmed-growth``: the original keeps more memory per iteration than the twin (median
  paired difference > 0); or it ran out of memory under the cap while the twin did not.
- ``confirmed-peak-excess``: no growth, but the original's per-iteration peak is higher.
- ``not-reproduced``: both completed the window and neither differs.
- ``confirmed-growth`` also when the autograd graph grows: more graph nodes reachable from live
  tensors in every measured iteration than with the fix (a loss kept after ``backward()``). Its
  bytes are host memory, from the native heap; the storages need not grow at all.
- ``confirmed-one-time``: a one-shot scope (``torch.load`` without ``map_location``) leaves more
  device memory allocated right after it than the twin; or (TML010) the DataLoader's worker
  processes hold device memory of their own (a CUDA context each).
- ``confirmed-error``: the original raises at the flagged line, and the twin runs; or (TML010)
  its DataLoader workers fail with ``Cannot re-initialize CUDA in forked subprocess``.
- ``no-memory-cost``: a rule whose cost is not memory (TML002: wrong gradients; TML009: time)
  and no growth: what it does cost is measured instead (gradient norm, ms per iteration).
- ``fix-crashed``: the twin made from the fix (or written by hand) raised or died where the
  original ran: a defect of the fix, with its exception and line. The original alone is still
  judged (``alone_verdict``).
- ``not-reproduced``: both completed the window and neither differs.
- ``inconclusive``: with one specific ``inconclusive_reason`` (``INCONCLUSIVE_REASONS``).

Without a twin (no fix, or a twin that cannot be replayed) the original alone confirms growth
when it grows in every measured iteration and what each iteration created survives two
iterations later (storages), or when its graph grows in every measured iteration (nodes).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Optional

from torchmemlint.verify.runner import RunOutcome

# What one autograd node kept alive costs on the native heap, on the CPU and on CUDA: 650 to 900 B
# (docs/verification.md, "Bytes per retained node").
CALIBRATED_BYTES_PER_NODE = 800
CONFIRMED_GROWTH = "confirmed-growth"
CONFIRMED_PEAK_EXCESS = "confirmed-peak-excess"
NOT_REPRODUCED = "not-reproduced"
INCONCLUSIVE = "inconclusive"
CONFIRMED_ONE_TIME = "confirmed-one-time"
CONFIRMED_ERROR = "confirmed-error"
NO_MEMORY_COST = "no-memory-cost"
FIX_CRASHED = "fix-crashed"
VERDICTS = (CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, CONFIRMED_ONE_TIME, CONFIRMED_ERROR, NO_MEMORY_COST,
            NOT_REPRODUCED, FIX_CRASHED, INCONCLUSIVE)

# Why a verdict is inconclusive: one of these, always (``Judgement.inconclusive_reason``).
INCONCLUSIVE_REASONS = {
    "not-repeating": "the finding is in no loop or function that repeats, and is no one-time cost",
    "not-instrumentable": "the scope cannot be capped without moving lines (`async for`, a function that starts "
                          "with `try`)",
    "original-failed": "the original raised an exception (not at the flagged line, or the twin failed too)",
    "original-crashed": "the original died without a Python exception (a signal, a native crash)",
    "original-timeout": "the original ran out of time",
    "scope-not-reached": "the original never ran the replayed scope",
    "oom-without-growth": "the original ran out of memory without growing first",
    "twin-timeout": "the twin ran out of time",
    "twin-oom": "the twin ran out of memory and the original did not",
    "twin-not-further": "both ran out of memory",
    "control-flow-differs": "the original and the twin ran different numbers of iterations",
    "too-few-iterations": "fewer than warm-up + 2 iterations ran",
    "no-twin": "no fix and no hand-written twin, and the original alone does not grow in every iteration",
    "needs-cuda": "the cost is device memory (once: TML011; kept every iteration: TML004), which only a CUDA replay "
                  "shows",
    "no-cuda": "the finding is about CUDA in DataLoader worker processes, and this replay has no CUDA",
    "framework-not-installed": "the script imports a training framework (lightning, transformers ...) that is not "
                               "installed where verify runs",
}

# Rules whose cost is not memory, and what is measured instead when no growth shows.
NON_MEMORY_COSTS = {"TML002": "gradients", "TML009": "time"}
# Rules whose cost is paid once, at the flagged statement: replayed as a one-shot scope.
ONE_TIME_RULES = frozenset({"TML011"})
# Rules whose cost is in the DataLoader's worker processes: the script runs as it is, watched.
WORKER_RULES = frozenset({"TML010"})
# What a worker that touches CUDA after its parent initialised it raises (under ``fork``).
FORKED_CUDA_ERROR = "Cannot re-initialize CUDA in forked subprocess"
# A graph carried into the next iteration (TML005) that the last backward freed: the next
# backward walks into it and fails wherever that backward is, not at the flagged line.
CHAINED_GRAPH_ERROR = "Trying to backward through the graph a second time"
CHAINED_GRAPH_RULES = frozenset({"TML005"})
# Rules whose cost is device memory kept every iteration, which their fix moves to the host: in
# a CPU replay `.cpu()` returns the same storage, so the original and the twin keep the same.
DEVICE_MEMORY_RULES = frozenset({"TML004"})

# Fewest measured iterations a verdict is drawn from.
MIN_MEASURED = 2
PROJECTED_STEPS = 10_000
# The Python heap is not exact (interpreter caches, free lists): heap growth counts only when
# the storages show none, it is at least this much per iteration, and every iteration shows it.
HEAP_GROWTH_THRESHOLD = 1024


@dataclass
class Series:
    """One replay on one meter: index k is boundary k (0 = entry into the scope)."""

    live: list[int]
    peak: list[int]
    allocated: list[int]
    heap: list[int]
    nodes: list[int] = field(default_factory=list)  # autograd nodes reachable from live tensors
    saved: list[int] = field(default_factory=list)  # tensors those nodes still save
    native: list[int] = field(default_factory=list)  # native heap in use
    host_storage: list[int] = field(default_factory=list)  # CPU storages (part of the native heap)
    grad_norm: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)  # index k: iteration k's own time (k >= 1)

    def growth(self, k: int) -> int:
        return self.live[k] - self.live[k - 1]

    def heap_growth(self, k: int) -> int:
        return self.heap[k] - self.heap[k - 1]

    def node_growth(self, k: int) -> int:
        return self.nodes[k] - self.nodes[k - 1]

    def graph_heap_growth(self, k: int) -> int:
        """Native heap growth that is not CPU tensor storage: the graph's node objects."""
        return (self.native[k] - self.native[k - 1]) - (self.host_storage[k] - self.host_storage[k - 1])


def meter_of(outcome: RunOutcome) -> str:
    return "cuda" if outcome.start.get("device") == "cuda" else "live-storage"


def series(outcome: RunOutcome, meter: str, device: str = "cpu", rounded: bool = False) -> Series:
    """``meter``: "cuda" (the allocator's counts) or "live-storage" (storages on ``device``,
    raw or rounded to the CUDA allocator's blocks)."""
    live, peak, allocated, heap = [], [], [], []
    for boundary in outcome.boundaries:
        if meter == "cuda":
            numbers = boundary["cuda"]
            live.append(numbers["allocated"])
            peak.append(numbers["peak"])
            # the allocator keeps no such count: the live-storage meter's, on the device
            allocated.append(boundary["storage"].get("cuda", {}).get("allocated", 0))
        else:
            numbers = boundary["storage"].get(device, {})
            live.append(numbers.get("live_rounded" if rounded else "live", 0))
            peak.append(numbers.get("peak", 0))
            allocated.append(numbers.get("allocated", 0))
        heap.append(boundary["heap"])
    graphs = [boundary.get("graph", {}) for boundary in outcome.boundaries]
    times = [boundary.get("time", 0.0) for boundary in outcome.boundaries]
    sampling = [boundary.get("sampling_s", 0.0) for boundary in outcome.boundaries]
    return Series(live, peak, allocated, heap,
                  nodes=[graph.get("nodes", 0) for graph in graphs], saved=[graph.get("saved", 0) for graph in graphs],
                  native=[boundary.get("native", 0) for boundary in outcome.boundaries],
                  host_storage=[boundary["storage"].get("cpu", {}).get("live", 0) for boundary in outcome.boundaries],
                  grad_norm=[boundary.get("grad_norm", 0.0) for boundary in outcome.boundaries],
                  seconds=[0.0] + [times[k] - times[k - 1] - sampling[k - 1] for k in range(1, len(times))])


def retained_per_iteration(outcome: RunOutcome, device: str, rounded: bool = False) -> int:
    """Median over the iterations the replay took survivors from, of the bytes created in the
    iteration and still alive at the end of the replay."""
    by_iteration: dict[int, int] = {k: 0 for k in outcome.end.get("survivor_iterations", ())}
    for group in outcome.end.get("survivors", ()):
        if group["device"] == device:
            by_iteration[group["iteration"]] = by_iteration.get(group["iteration"], 0) + group[
                "rounded" if rounded else "bytes"]
    return int(statistics.median(by_iteration.values())) if by_iteration else 0


@dataclass
class Judgement:
    verdict: str
    reason: str  # one sentence: why this verdict
    bytes_per_iteration: Optional[int] = None
    peak_excess_bytes: Optional[int] = None
    heap_bytes_per_iteration: Optional[int] = None
    allocated_excess_bytes: Optional[int] = None
    live_excess_bytes: Optional[int] = None
    original_bytes_per_iteration: Optional[int] = None
    twin_bytes_per_iteration: Optional[int] = None
    growth_meter: Optional[str] = None
    measured: list[int] = field(default_factory=list)  # the iterations compared
    inconclusive_reason: Optional[str] = None  # a key of INCONCLUSIVE_REASONS
    memory: Optional[str] = None  # where the confirmed cost lives: "host" or "device"
    nodes_per_iteration: Optional[int] = None  # paired growth of the graph meter's node count
    saved_tensors_per_iteration: Optional[int] = None
    native_bytes_per_iteration: Optional[int] = None  # paired growth of the native heap, CPU storages excluded
    one_time_bytes: Optional[int] = None  # one-shot scopes: device bytes held after the statement, more than the twin
    workers: Optional[dict] = None  # worker scopes: the watch's figures (``workers.WorkerWatch.figures``)
    ms_per_iteration: Optional[float] = None  # the original's median iteration time (no-memory-cost: time)
    twin_ms_per_iteration: Optional[float] = None
    grad_norm: Optional[float] = None  # the original's gradient norm at the last iteration (TML002)
    twin_grad_norm: Optional[float] = None
    fix_error: Optional[str] = None  # fix-crashed: what the twin raised, and where
    alone_verdict: Optional[str] = None  # fix-crashed: the verdict of the original alone

    @property
    def projected_bytes(self) -> Optional[int]:
        if self.verdict != CONFIRMED_GROWTH or self.bytes_per_iteration is None:
            return None
        return self.bytes_per_iteration * PROJECTED_STEPS


def _median(values: list[int]) -> int:
    return int(statistics.median(values)) if values else 0


def paired_growth(ours: Series, theirs: Series, measured: list[int]) -> int:
    """Median over ``measured`` of how much more live memory each iteration added in ``ours``."""
    return _median([ours.growth(k) - theirs.growth(k) for k in measured])


def inconclusive(reason_code: str, reason: str, **figures) -> Judgement:
    assert reason_code in INCONCLUSIVE_REASONS, reason_code
    return Judgement(INCONCLUSIVE, reason, inconclusive_reason=reason_code, **figures)


def _failure(outcome: RunOutcome, which: str, timeout_s: float) -> Optional[tuple[str, str]]:
    """Why a replay gives nothing to compare (a reason code for the original, and a sentence),
    or None when it ran."""
    where = f"after iteration {outcome.iterations}" if outcome.boundaries else "before the loop was reached"
    if outcome.status == "timeout":
        return "original-timeout", f"the {which} timed out after {timeout_s:g} s, {where}"
    if outcome.status == "error":
        return "original-failed", f"the {which} raised {error_text(outcome)}"
    if outcome.status == "crashed":
        signal = outcome.end.get("signal")
        cause = outcome.end.get("error", {}).get("message") or (
            f"signal {signal}" if signal else f"exit status {outcome.end.get('exit')}")
        return "original-crashed", f"the {which} died ({cause}) {where}"
    if not outcome.boundaries:
        return "scope-not-reached", f"the {which} never reached the loop"
    return None


def raises_for_finding(original: RunOutcome, code: str, flagged_line: int) -> bool:
    """The original raises because of the finding: at its line, or (a carried graph) in the
    backward that walks into it."""
    error = original.end.get("error", {}) if original.status == "error" else {}
    return bool(error) and bool(flagged_line) and (
        error.get("line") == flagged_line or code in CHAINED_GRAPH_RULES and CHAINED_GRAPH_ERROR in error.get("message", ""))


def error_text(outcome: RunOutcome) -> str:
    """``Type at line N: message`` of a replay that raised."""
    error = outcome.end.get("error", {})
    line = f" at line {error['line']}" if error.get("line") else ""
    return f"{error.get('type')}{line}: {error.get('message', '')}".rstrip(": .")


def judge(original: RunOutcome, twin: Optional[RunOutcome], warmup: int, timeout_s: float, code: str = "",
          flagged_line: int = 0) -> Judgement:
    """The verdict on a finding of rule ``code`` at ``flagged_line`` from its replays."""
    meter = meter_of(original)
    if original.status == "oom":
        return _judge_out_of_memory(original, twin, meter, warmup, timeout_s)
    if raises_for_finding(original, code, flagged_line) and twin is not None and twin.status in ("capped", "finished"):
        where = "at the flagged line" if original.end["error"].get("line") == flagged_line else \
            "where the next backward walks into the graph the flagged line carries over"
        return Judgement(CONFIRMED_ERROR, f"the original raises {error_text(original)}, {where}; "
                                          f"the fixed twin runs {twin.iterations} iterations")
    failure = _failure(original, "original", timeout_s)
    if failure:
        return inconclusive(*failure)
    if twin is None:
        return judge_alone(original, meter, warmup)
    if twin.status in ("error", "crashed"):
        return _fix_crashed(original, twin, meter, warmup, timeout_s)
    failure = _failure(twin, "twin (the fixed code)", timeout_s)
    if failure:
        code_of_twin = "twin-timeout" if twin.status == "timeout" else "control-flow-differs"
        return inconclusive(code_of_twin, failure[1])
    if twin.status == "oom":
        return inconclusive("twin-oom", "the twin (the fixed code) ran out of memory and the original did not")
    if original.iterations != twin.iterations:
        return inconclusive("control-flow-differs", f"the original ran {original.iterations} iterations and the "
                                                    f"twin {twin.iterations}: the fix changes the control flow")
    last = original.iterations
    measured = list(range(warmup + 1, last + 1))
    if len(measured) < MIN_MEASURED:
        return inconclusive("too-few-iterations", f"only {last} iterations ran; {warmup} warm-up and "
                                                  f"{MIN_MEASURED} measured iterations are needed")
    ours, theirs = series(original, meter), series(twin, meter)
    growth = paired_growth(ours, theirs, measured)
    peak = _median([ours.peak[k] - theirs.peak[k] for k in measured])
    heap_differences = [ours.heap_growth(k) - theirs.heap_growth(k) for k in measured]
    heap = _median(heap_differences)
    judgement = Judgement(
        NOT_REPRODUCED, "", bytes_per_iteration=growth, peak_excess_bytes=peak, heap_bytes_per_iteration=heap,
        allocated_excess_bytes=_median([ours.allocated[k] - theirs.allocated[k] for k in measured]),
        live_excess_bytes=_median([ours.live[k] - theirs.live[k] for k in measured]),
        original_bytes_per_iteration=_median([ours.growth(k) for k in measured]),
        twin_bytes_per_iteration=_median([theirs.growth(k) for k in measured]), measured=measured)
    # On CUDA the allocator sees device memory only: what the script keeps in CPU tensors (a
    # cache of host samples, batches kept before `.to(device)`) is host memory, counted by the
    # live-storage meter's CPU storages.
    host_growth = paired_growth(series(original, "live-storage", "cpu"), series(twin, "live-storage", "cpu"),
                                measured) if meter == "cuda" else 0
    node_differences = [ours.node_growth(k) - theirs.node_growth(k) for k in measured]
    judgement.nodes_per_iteration = _median(node_differences)
    judgement.saved_tensors_per_iteration = _median(
        [(ours.saved[k] - ours.saved[k - 1]) - (theirs.saved[k] - theirs.saved[k - 1]) for k in measured])
    judgement.native_bytes_per_iteration = _median(
        [ours.graph_heap_growth(k) - theirs.graph_heap_growth(k) for k in measured])
    cost = NON_MEMORY_COSTS.get(code)
    if growth > 0:
        judgement.verdict, judgement.growth_meter = CONFIRMED_GROWTH, meter
        judgement.memory = "device" if meter == "cuda" else "host"
        judgement.reason = f"live memory grows by {growth:,} B per iteration more than with the fix"
        if min(node_differences) > 0:
            judgement.reason += (f", and the autograd graph by {judgement.nodes_per_iteration:,} nodes per iteration, "
                                 f"{graph_price(judgement)[1]}")
    elif host_growth > 0:
        judgement.verdict, judgement.growth_meter, judgement.memory = CONFIRMED_GROWTH, "live-storage", "host"
        judgement.bytes_per_iteration = host_growth
        judgement.reason = (f"host memory grows by {host_growth:,} B per iteration more than with the fix (CPU tensor "
                            "storages; the device keeps no more)")
    elif min(node_differences) > 0:
        judgement.verdict, judgement.growth_meter, judgement.memory = CONFIRMED_GROWTH, "graph", "host"
        judgement.bytes_per_iteration, price = graph_price(judgement)
        judgement.reason = (f"the autograd graph grows by {judgement.nodes_per_iteration:,} nodes per iteration more "
                            f"than with the fix, in every measured iteration: {price}, which no device meter sees")
    elif heap >= HEAP_GROWTH_THRESHOLD and min(heap_differences) > 0:
        judgement.verdict, judgement.growth_meter, judgement.memory = CONFIRMED_GROWTH, "python-heap", "host"
        judgement.bytes_per_iteration = heap
        judgement.reason = f"the Python heap grows by about {heap:,} B per iteration more than with the fix"
    elif cost is not None:
        _judge_other_cost(judgement, cost, ours, theirs, measured)
    elif code in DEVICE_MEMORY_RULES and meter != "cuda":
        judgement.verdict, judgement.inconclusive_reason = INCONCLUSIVE, "needs-cuda"
        judgement.reason = (f"the cost is device memory, which a CPU replay cannot show: `.cpu()` of a CPU tensor is "
                            f"the same storage, so the original and the fixed twin keep the same (the original keeps "
                            f"{judgement.original_bytes_per_iteration:,} B per iteration here); replay on CUDA")
    elif peak > 0:
        judgement.verdict = CONFIRMED_PEAK_EXCESS
        judgement.reason = f"no growth, but each iteration's peak is {peak:,} B higher than with the fix"
    else:
        judgement.reason = (f"over {len(measured)} measured iterations the original keeps and peaks at no more "
                            "memory than the fixed twin")
    return judgement


def _judge_other_cost(judgement: Judgement, cost: str, ours: Series, theirs: Series, measured: list[int]) -> None:
    """No growth, for a rule whose cost is not memory: say so, and measure what it costs."""
    judgement.verdict = NO_MEMORY_COST
    peak = judgement.peak_excess_bytes or 0
    aside = (f" (each iteration's peak is {peak:,} B higher than with the fix, without growing)" if peak > 0 else "")
    if cost == "gradients":
        last = measured[-1]
        judgement.grad_norm, judgement.twin_grad_norm = ours.grad_norm[last], theirs.grad_norm[last]
        ratio = (f", {judgement.grad_norm / judgement.twin_grad_norm:.1f} times the fixed twin's"
                 if judgement.twin_grad_norm else "")
        judgement.reason = (f"no memory cost: gradients accumulate in place, the live memory does not grow{aside}; "
                            f"what it costs is wrong updates: after {last} iterations the gradient norm is "
                            f"{judgement.grad_norm:.3g} against {judgement.twin_grad_norm:.3g} with the fix{ratio}")
    else:
        judgement.ms_per_iteration = round(1000 * statistics.median(ours.seconds[k] for k in measured), 3)
        judgement.twin_ms_per_iteration = round(1000 * statistics.median(theirs.seconds[k] for k in measured), 3)
        times = (f"{judgement.ms_per_iteration:.3f} ms per iteration against {judgement.twin_ms_per_iteration:.3f} ms "
                 "with the fix")
        judgement.reason = (f"no memory cost: it frees no live memory{aside}; what it costs is time: {times}"
                            if judgement.ms_per_iteration > judgement.twin_ms_per_iteration else
                            f"no memory cost: it frees no live memory{aside}, and here it costs no time either: "
                            f"{times}")


def heap_disturbed(judgement: Judgement) -> bool:
    """The graph meter counted nodes kept in every measured iteration, but the native heap reads as
    not growing: other allocations in the same iterations (glibc taking or returning memory, the
    collector) hid them. The nodes are counted exactly; only this run's price of them is lost."""
    return bool(judgement.nodes_per_iteration) and (judgement.native_bytes_per_iteration or 0) <= 0


def graph_price(judgement: Judgement) -> tuple[int, str]:
    """The host bytes of the nodes the graph keeps per iteration, and how to say them: the native
    heap's paired growth, or, where the heap reading was disturbed, the calibrated cost per node."""
    if not heap_disturbed(judgement):
        native = judgement.native_bytes_per_iteration
        return native, f"about {native:,} B of host memory (native heap) per iteration"
    estimate = judgement.nodes_per_iteration * CALIBRATED_BYTES_PER_NODE
    return estimate, (f"about {estimate:,} B of host memory per iteration at the calibrated "
                      f"{CALIBRATED_BYTES_PER_NODE} B per node (the native heap, {judgement.native_bytes_per_iteration:,} "
                      "B per iteration in this run, was moved by other allocations)")


def judge_alone(original: RunOutcome, meter: str, warmup: int, why: str = "the finding has no fix to compare with"
                ) -> Judgement:
    """No twin to pair with (no fix, no hand-written copy, or one that cannot be replayed). The
    original alone confirms growth when it grows in every measured iteration and what each
    iteration created is still alive two iterations later (storages), or when its graph grows in
    every measured iteration; anything less cannot be told from growth the script intends."""
    last = original.iterations
    measured = list(range(warmup + 1, last + 1))
    if len(measured) < MIN_MEASURED:
        return inconclusive("too-few-iterations", f"only {last} iterations ran; {warmup} warm-up and "
                                                  f"{MIN_MEASURED} measured iterations are needed")
    ours = series(original, meter)
    growths = [ours.growth(k) for k in measured]
    growth = _median(growths)
    retained = retained_per_iteration(original, "cuda" if meter == "cuda" else "cpu", rounded=meter == "cuda")
    node_growths = [ours.node_growth(k) for k in measured]
    judgement = Judgement(INCONCLUSIVE, "", bytes_per_iteration=growth, original_bytes_per_iteration=growth,
                          measured=measured, nodes_per_iteration=_median(node_growths),
                          native_bytes_per_iteration=_median([ours.graph_heap_growth(k) for k in measured]))
    if min(growths) > 0 and retained > 0:
        judgement.verdict, judgement.growth_meter = CONFIRMED_GROWTH, meter
        judgement.memory = "device" if meter == "cuda" else "host"
        judgement.reason = (f"{why}, but the original alone grows in every measured iteration (median {growth:,} B) "
                            f"and keeps {retained:,} B of what each iteration created alive two iterations later")
    elif min(node_growths) > 0:
        judgement.verdict, judgement.growth_meter, judgement.memory = CONFIRMED_GROWTH, "graph", "host"
        judgement.bytes_per_iteration, price = graph_price(judgement)
        judgement.reason = (f"{why}, but the original alone keeps {judgement.nodes_per_iteration:,} more autograd "
                            f"nodes in every measured iteration: {price}")
    else:
        judgement.inconclusive_reason = "no-twin"
        judgement.reason = (f"{why} (the original alone grows by {growth:,} B per iteration, not in every "
                            "iteration or without survivors); `--twin FIXED.py` compares with a fixed copy of the "
                            "script")
    return judgement


def _fix_crashed(original: RunOutcome, twin: RunOutcome, meter: str, warmup: int, timeout_s: float) -> Judgement:
    """The twin raised or died where the original ran: the fix is broken. The original alone is
    judged too, so that what the finding costs is still said."""
    crash = error_text(twin) if twin.status == "error" else _failure(twin, "twin", timeout_s)[1]  # type: ignore[index]
    alone = judge_alone(original, meter, warmup, why="without a working twin")
    alone.alone_verdict, alone.verdict = alone.verdict, FIX_CRASHED
    alone.inconclusive_reason = None
    alone.fix_error = crash
    alone.reason = f"the fix is broken: its twin raised {crash}" if twin.status == "error" else \
        f"the fix is broken: {crash}"
    alone.reason += f". {alone_sentence(alone)}"
    return alone


def alone_sentence(judgement: Judgement) -> str:
    if judgement.alone_verdict == CONFIRMED_GROWTH:
        return (f"The original alone confirms growth: {judgement.bytes_per_iteration:,} B per iteration "
                f"({judgement.memory} memory)")
    return f"The original alone grows by {judgement.original_bytes_per_iteration or 0:,} B per iteration"


def judge_one_time(original: RunOutcome, twin: Optional[RunOutcome], timeout_s: float) -> Judgement:
    """A one-shot scope (boundary 0 before the statement, 1 after it): the device memory it
    leaves allocated, more than the twin's."""
    failure = _failure(original, "original", timeout_s)
    if failure:
        return inconclusive(*failure)
    if original.iterations < 1:
        return inconclusive("scope-not-reached", "the original never ran the flagged statement to its end")
    if meter_of(original) != "cuda":
        return inconclusive("needs-cuda", "a one-time cost on the device it was saved from: the CPU replay loads "
                                          "everything onto the CPU with or without the fix; replay on CUDA")
    if twin is None or twin.status not in ("capped", "finished") or twin.iterations < 1:
        if twin is not None and twin.status in ("error", "crashed"):
            return Judgement(FIX_CRASHED, f"the fix is broken: its twin raised {error_text(twin)}",
                             fix_error=error_text(twin))
        return inconclusive("no-twin", "the one-time cost needs the fixed twin to compare with")
    ours, theirs = series(original, "cuda"), series(twin, "cuda")
    held = (ours.live[1] - ours.live[0]) - (theirs.live[1] - theirs.live[0])
    peak = ours.peak[1] - theirs.peak[1]
    judgement = Judgement(NOT_REPRODUCED, "", one_time_bytes=held, peak_excess_bytes=peak, measured=[1],
                          original_bytes_per_iteration=ours.live[1] - ours.live[0],
                          twin_bytes_per_iteration=theirs.live[1] - theirs.live[0])
    if held > 0:
        judgement.verdict, judgement.memory, judgement.growth_meter = CONFIRMED_ONE_TIME, "device", "cuda"
        judgement.reason = (f"right after the flagged statement {held:,} B more device memory is allocated than with "
                            f"the fix (once, not per iteration; peak {peak:,} B higher)")
    else:
        judgement.reason = "the flagged statement leaves no more device memory allocated than with the fix"
    return judgement


def _judge_out_of_memory(original: RunOutcome, twin: Optional[RunOutcome], meter: str, warmup: int,
                         timeout_s: float) -> Judgement:
    """Out of memory under the cap counts as confirmed growth when memory grew until then and
    the twin (if any) got further. The window is what ran: as much of the warm-up is skipped as
    leaves one iteration."""
    ours = series(original, meter)
    last = len(ours.live) - 1
    at = f"at iteration {last + 1}" if original.boundaries else "before the loop was reached"
    measured = list(range(min(warmup, last - 1) + 1, last + 1))
    growth = _median([ours.growth(k) for k in measured])
    if growth <= 0:
        return inconclusive("oom-without-growth", f"the original ran out of memory {at} without growing before")
    judgement = Judgement(CONFIRMED_GROWTH, "", bytes_per_iteration=growth, original_bytes_per_iteration=growth,
                          growth_meter=meter, measured=measured, memory="device" if meter == "cuda" else "host")
    if twin is not None:
        failed = _failure(twin, "twin (the fixed code)", timeout_s)
        failure = failed[1] if failed else "the twin ran out of memory too" if twin.status == "oom" else None
        if failure or twin.iterations <= original.iterations:
            return inconclusive("twin-not-further", f"the original ran out of memory {at}, but "
                                                    f"{failure or 'the twin did not get further'}")
        theirs = series(twin, meter)
        judgement.twin_bytes_per_iteration = _median([theirs.growth(k) for k in measured])
        judgement.bytes_per_iteration = paired_growth(ours, theirs, measured)
    judgement.reason = (f"ran out of memory {at} under the memory cap, growing by "
                        f"{judgement.bytes_per_iteration:,} B per iteration"
                        + (" more than the twin, which ran all iterations" if twin else "") + " until then")
    return judgement


def judge_workers(original: RunOutcome, timeout_s: float) -> Judgement:
    """TML010, from a replay that watched the DataLoader workers (``workers.WorkerWatch``): the
    device memory each worker process held, or the error of CUDA in a forked worker."""
    figures = original.end.get("workers") or {}
    if original.start.get("device") != "cuda" or not figures.get("cuda", True):
        return inconclusive("no-cuda", "no CUDA in this replay: a DataLoader worker's CUDA context, or the error of "
                                       "CUDA in a forked worker, exists only on a CUDA device; replay on a GPU")
    message = original.end.get("error", {}).get("message", "")
    if original.status == "error" and FORKED_CUDA_ERROR in message:
        return Judgement(CONFIRMED_ERROR, f"the DataLoader workers raise `RuntimeError: {FORKED_CUDA_ERROR}`: the "
                                          "script initialised CUDA before its workers were forked, and the worker "
                                          "code uses CUDA (the error the rule predicts)", workers=figures)
    if original.status not in ("capped", "finished"):
        failure = _failure(original, "original", timeout_s)
        return inconclusive(*failure) if failure else inconclusive("original-failed", "the original failed")
    workers = figures.get("workers", [])
    held = sum(worker["device_bytes"] for worker in workers)
    judgement = Judgement(NOT_REPRODUCED, "", one_time_bytes=held, workers=figures, measured=[1])
    if held > 0:
        judgement.verdict, judgement.memory, judgement.growth_meter = CONFIRMED_ONE_TIME, "device", "workers"
        each = ", ".join(f"{worker['device_bytes'] / 2**20:,.0f} MiB (pid {worker['pid']})" for worker in workers)
        whose = "" if figures.get("attributed", True) else (
            " (processes new on the GPU during the replay: their ids are not this replay's, another PID namespace)")
        judgement.reason = (f"{len(workers)} DataLoader worker process(es) hold device memory of their own, "
                            f"{held:,} B in all{whose}: {each}, read by {figures.get('source')}; a CUDA context per "
                            "worker, paid again whenever the workers start (every epoch unless they are persistent)")
    elif figures.get("processes"):
        judgement.reason = (f"the replay started {figures['processes']} process(es), and none held device memory of "
                            "its own")
    else:
        judgement.reason = "the replay started no worker process (the DataLoader ran without workers)"
    return judgement
