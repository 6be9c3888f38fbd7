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
- ``inconclusive``: the scope was not reached, a replay failed or timed out, the two took
  different paths, too few iterations ran, or there is no twin (no fix, no hand-written copy).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Optional

from torchmemlint.verify.runner import RunOutcome

CONFIRMED_GROWTH = "confirmed-growth"
CONFIRMED_PEAK_EXCESS = "confirmed-peak-excess"
NOT_REPRODUCED = "not-reproduced"
INCONCLUSIVE = "inconclusive"
VERDICTS = (CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, NOT_REPRODUCED, INCONCLUSIVE)

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

    def growth(self, k: int) -> int:
        return self.live[k] - self.live[k - 1]

    def heap_growth(self, k: int) -> int:
        return self.heap[k] - self.heap[k - 1]


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
    return Series(live, peak, allocated, heap)


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


def _failure(outcome: RunOutcome, which: str, timeout_s: float) -> Optional[str]:
    """Why a replay gives nothing to compare, or None when it ran."""
    where = f"after iteration {outcome.iterations}" if outcome.boundaries else "before the loop was reached"
    if outcome.status == "timeout":
        return f"the {which} timed out after {timeout_s:g} s, {where}"
    if outcome.status == "error":
        error = outcome.end["error"]
        line = f" at line {error['line']}" if error.get("line") else ""
        return f"the {which} raised {error['type']}{line}: {error['message']}".rstrip(": ")
    if outcome.status == "crashed":
        signal = outcome.end.get("signal")
        cause = outcome.end.get("error", {}).get("message") or (
            f"signal {signal}" if signal else f"exit status {outcome.end.get('exit')}")
        return f"the {which} died ({cause}) {where}"
    if not outcome.boundaries:
        return f"the {which} never reached the loop"
    return None


def judge(original: RunOutcome, twin: Optional[RunOutcome], warmup: int, timeout_s: float) -> Judgement:
    meter = meter_of(original)
    if original.status == "oom":
        return _judge_out_of_memory(original, twin, meter, warmup, timeout_s)
    failure = _failure(original, "original", timeout_s)
    if failure:
        return Judgement(INCONCLUSIVE, failure)
    if twin is None:
        return _judge_alone(original, meter, warmup)
    failure = _failure(twin, "twin (the fixed code)", timeout_s)
    if twin.status == "oom":
        failure = "the twin (the fixed code) ran out of memory and the original did not"
    if failure:
        return Judgement(INCONCLUSIVE, failure)
    if original.iterations != twin.iterations:
        return Judgement(INCONCLUSIVE, f"the original ran {original.iterations} iterations and the twin "
                                       f"{twin.iterations}: the fix changes the control flow")
    last = original.iterations
    measured = list(range(warmup + 1, last + 1))
    if len(measured) < MIN_MEASURED:
        return Judgement(INCONCLUSIVE, f"only {last} iterations ran; {warmup} warm-up and {MIN_MEASURED} "
                                       "measured iterations are needed")
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
    if growth > 0:
        judgement.verdict, judgement.growth_meter = CONFIRMED_GROWTH, meter
        judgement.reason = f"live memory grows by {growth:,} B per iteration more than with the fix"
    elif heap >= HEAP_GROWTH_THRESHOLD and min(heap_differences) > 0:
        judgement.verdict, judgement.growth_meter = CONFIRMED_GROWTH, "python-heap"
        judgement.bytes_per_iteration = heap
        judgement.reason = f"the Python heap grows by about {heap:,} B per iteration more than with the fix"
    elif peak > 0:
        judgement.verdict = CONFIRMED_PEAK_EXCESS
        judgement.reason = f"no growth, but each iteration's peak is {peak:,} B higher than with the fix"
    else:
        judgement.reason = (f"over {len(measured)} measured iterations the original keeps and peaks at no more "
                            "memory than the fixed twin")
    return judgement


def _judge_alone(original: RunOutcome, meter: str, warmup: int) -> Judgement:
    """No fix and no hand-written twin: nothing to pair with. The original's own growth is
    reported, but it cannot be told from growth the script intends (collecting predictions)."""
    last = original.iterations
    measured = list(range(warmup + 1, last + 1))
    if len(measured) < MIN_MEASURED:
        return Judgement(INCONCLUSIVE, f"only {last} iterations ran; {warmup} warm-up and {MIN_MEASURED} "
                                       "measured iterations are needed")
    ours = series(original, meter)
    growth = _median([ours.growth(k) for k in measured])
    return Judgement(INCONCLUSIVE, f"the finding has no fix to compare with (the original alone grows by {growth:,} B "
                                   "per iteration); `--twin FIXED.py` compares with a fixed copy of the script",
                     original_bytes_per_iteration=growth, measured=measured)


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
        return Judgement(INCONCLUSIVE, f"the original ran out of memory {at} without growing before")
    judgement = Judgement(CONFIRMED_GROWTH, "", bytes_per_iteration=growth, original_bytes_per_iteration=growth,
                          growth_meter=meter, measured=measured)
    if twin is not None:
        failure = _failure(twin, "twin (the fixed code)", timeout_s) or (
            "the twin ran out of memory too" if twin.status == "oom" else None)
        if failure or twin.iterations <= original.iterations:
            return Judgement(INCONCLUSIVE, f"the original ran out of memory {at}, but "
                                           f"{failure or 'the twin did not get further'}")
        theirs = series(twin, meter)
        judgement.twin_bytes_per_iteration = _median([theirs.growth(k) for k in measured])
        judgement.bytes_per_iteration = paired_growth(ours, theirs, measured)
    judgement.reason = (f"ran out of memory {at} under the memory cap, growing by "
                        f"{judgement.bytes_per_iteration:,} B per iteration"
                        + (" more than the twin, which ran all iterations" if twin else "") + " until then")
    return judgement
