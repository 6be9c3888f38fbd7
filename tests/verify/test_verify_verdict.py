"""Verdicts from measurements (synthetic replays: no child process)."""
from __future__ import annotations

from typing import Optional, Sequence

import pytest

from torchmemlint.verify.runner import RunOutcome
from torchmemlint.verify.verdict import (
    CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, INCONCLUSIVE, NOT_REPRODUCED, judge,
)

WARMUP = 2


def replay(live: Sequence[int], peak: Optional[Sequence[int]] = None, status: str = "capped",
           heap: Optional[Sequence[int]] = None, end: Optional[dict] = None) -> RunOutcome:
    """A CPU replay whose boundary k measured ``live[k]`` live bytes and ``peak[k]`` as peak."""
    peak = peak or [v + 100 for v in live]
    heap = heap or [1000] * len(live)
    boundaries = [{"event": "boundary", "iteration": k, "heap": heap[k],
                   "storage": {"cpu": {"live": live[k], "peak": peak[k], "allocated": 0, "live_rounded": 0}}}
                  for k in range(len(live))]
    return RunOutcome(status, boundaries, {"device": "cpu"}, end or {"status": status})


def test_growth_is_the_median_paired_difference() -> None:
    original = replay([0, 50, 60, 70, 80, 95, 100])  # 10 B per iteration, one outlier
    twin = replay([0, 50, 50, 50, 50, 50, 50])
    judgement = judge(original, twin, WARMUP, 60)
    assert judgement.verdict == CONFIRMED_GROWTH
    assert judgement.bytes_per_iteration == 10
    assert judgement.measured == [3, 4, 5, 6]
    assert judgement.projected_bytes == 100_000


def test_equal_growth_is_not_reproduced() -> None:
    """Both keep 4 B per iteration: the fix does not change what is kept."""
    judgement = judge(replay([0, 4, 8, 12, 16, 20]), replay([0, 4, 8, 12, 16, 20]), WARMUP, 60)
    assert judgement.verdict == NOT_REPRODUCED
    assert judgement.bytes_per_iteration == 0
    assert judgement.original_bytes_per_iteration == judgement.twin_bytes_per_iteration == 4


def test_peak_excess_without_growth() -> None:
    original = replay([0, 50, 50, 50, 50, 50], peak=[0, 900, 900, 900, 900, 900])
    twin = replay([0, 50, 50, 50, 50, 50], peak=[0, 400, 400, 400, 400, 400])
    judgement = judge(original, twin, WARMUP, 60)
    assert judgement.verdict == CONFIRMED_PEAK_EXCESS
    assert (judgement.bytes_per_iteration, judgement.peak_excess_bytes) == (0, 500)


def test_python_heap_growth_counts_when_storages_do_not_differ() -> None:
    heap = [0, 5000, 7000, 9000, 11000, 13000]
    judgement = judge(replay([0] * 6, heap=heap), replay([0] * 6), WARMUP, 60)
    assert judgement.verdict == CONFIRMED_GROWTH
    assert (judgement.growth_meter, judgement.bytes_per_iteration) == ("python-heap", 2000)


def test_small_or_irregular_heap_differences_are_noise() -> None:
    heap = [0, 5000, 7000, 6900, 9000, 11000]  # one iteration shrinks
    assert judge(replay([0] * 6, heap=heap), replay([0] * 6), WARMUP, 60).verdict == NOT_REPRODUCED


def test_out_of_memory_after_growth_is_confirmed() -> None:
    original = replay([0, 2**30, 2**31], status="oom",
                      end={"status": "oom", "error": {"type": "RuntimeError", "message": "can't allocate", "line": 9}})
    twin = replay([0, 10, 10, 10, 10, 10])
    judgement = judge(original, twin, WARMUP, 60)
    assert judgement.verdict == CONFIRMED_GROWTH
    assert judgement.bytes_per_iteration == 2**30  # iteration 2: all but one warm-up iteration skipped
    assert "out of memory at iteration 3" in judgement.reason


def test_out_of_memory_without_growth_is_inconclusive() -> None:
    original = replay([0, 10, 10], status="oom")
    assert judge(original, replay([0, 10, 10, 10, 10, 10]), WARMUP, 60).verdict == INCONCLUSIVE


def test_out_of_memory_in_both_is_inconclusive() -> None:
    original = replay([0, 2**30, 2**31], status="oom")
    twin = replay([0, 2**30], status="oom")
    assert judge(original, twin, WARMUP, 60).verdict == INCONCLUSIVE


@pytest.mark.parametrize("original, twin, reason", [
    (replay([], status="timeout"), None, "timed out after 60 s, before the loop was reached"),
    (replay([0, 1, 2], status="timeout"), None, "timed out after 60 s, after iteration 2"),
    (replay([0, 1], status="error",
            end={"status": "error", "error": {"type": "ValueError", "message": "bad", "line": 7}}),
     None, "raised ValueError at line 7: bad"),
    (replay([], status="finished"), None, "never reached the loop"),
    (replay([0, 1, 2], status="finished"), replay([0, 1, 2], status="finished"), "only 2 iterations ran"),
    (replay([0, 1, 2, 3, 4, 5]), replay([0, 1, 2, 3], status="finished"), "the fix changes the control flow"),
    (replay([0, 1, 2, 3, 4, 5]), replay([0, 1], status="crashed", end={"signal": 11}), "twin (the fixed code) died"),
])
def test_inconclusive(original: RunOutcome, twin: Optional[RunOutcome], reason: str) -> None:
    judgement = judge(original, twin, WARMUP, 60)
    assert judgement.verdict == INCONCLUSIVE
    assert reason in judgement.reason


def test_without_a_twin_growth_is_reported_but_not_judged() -> None:
    """Growth alone may be intended (collecting predictions): only a twin can attribute it."""
    judgement = judge(replay([0, 5, 10, 15, 20, 25]), None, WARMUP, 60)
    assert (judgement.verdict, judgement.original_bytes_per_iteration) == (INCONCLUSIVE, 5)
    assert "no fix to compare with (the original alone grows by 5 B per iteration)" in judgement.reason


def cuda_replay(allocated: Sequence[int], storage: Sequence[int]) -> RunOutcome:
    """A CUDA replay: the allocator's count, and the live-storage meter's CUDA storages."""
    boundaries = [{"event": "boundary", "iteration": k, "heap": 0,
                   "cuda": {"allocated": allocated[k], "peak": allocated[k], "reserved": 0},
                   "storage": {"cuda": {"live": storage[k], "peak": storage[k], "allocated": 0,
                                        "live_rounded": allocated[k]}}}
                  for k in range(len(allocated))]
    return RunOutcome("capped", boundaries, {"device": "cuda", "device_name": "GPU"}, {"status": "capped"})


def test_cuda_replays_are_judged_on_the_allocator() -> None:
    """4 B kept per iteration are one 512-byte block of the caching allocator."""
    original = cuda_replay([0, 512, 1024, 1536, 2048, 2560], [0, 4, 8, 12, 16, 20])
    twin = cuda_replay([0] * 6, [0] * 6)
    judgement = judge(original, twin, WARMUP, 60)
    assert (judgement.verdict, judgement.growth_meter, judgement.bytes_per_iteration) == (CONFIRMED_GROWTH, "cuda", 512)


def test_cuda_results_carry_the_live_storage_figures() -> None:
    from torchmemlint.diagnostics import Diagnostic
    from torchmemlint.verify.instrument import IterationScope
    from torchmemlint.verify.verifier import Settings, build_result

    original = cuda_replay([0, 512, 1024, 1536, 2048, 2560], [0, 4, 8, 12, 16, 20])
    twin = cuda_replay([0] * 6, [0] * 6)
    result = build_result(Diagnostic("train.py", 3, 4, "TML001", "kept"), IterationScope("for", 0, 2), original,
                          twin, "", "import torch\nfor x in y:\n    kept.append(x)\n", Settings(warmup=WARMUP))
    document = result.to_json()
    assert (document["meter"], document["device"], document["bytes_per_iteration"]) == ("cuda", "GPU", 512)
    assert document["live_storage"] == {"bytes_per_iteration": 4, "rounded_bytes_per_iteration": 512}
    assert "Live-storage meter: 4 B per iteration (512 B in 512-B blocks)." in document["explanation"]
