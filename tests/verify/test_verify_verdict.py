"""Verdicts from measurements (synthetic replays: no child process)."""
from __future__ import annotations

from typing import Optional, Sequence

import pytest

from torchmemlint.verify.runner import RunOutcome
from torchmemlint.verify.verdict import (
    CALIBRATED_BYTES_PER_NODE, CONFIRMED_ERROR, CONFIRMED_GROWTH, CONFIRMED_ONE_TIME, CONFIRMED_PEAK_EXCESS, FIX_CRASHED, INCONCLUSIVE,
    INCONCLUSIVE_REASONS, NO_MEMORY_COST, NOT_REPRODUCED, judge, judge_one_time, judge_workers,
)

WARMUP = 2


def replay(live: Sequence[int], peak: Optional[Sequence[int]] = None, status: str = "capped",
           heap: Optional[Sequence[int]] = None, end: Optional[dict] = None, nodes: Optional[Sequence[int]] = None,
           native: Optional[Sequence[int]] = None, grad_norm: Optional[Sequence[float]] = None,
           time: Optional[Sequence[float]] = None) -> RunOutcome:
    """A CPU replay whose boundary k measured ``live[k]`` live bytes and ``peak[k]`` as peak,
    ``nodes[k]`` autograd nodes and ``native[k]`` bytes of native heap."""
    peak = peak or [v + 100 for v in live]
    heap = heap or [1000] * len(live)
    nodes = nodes or [0] * len(live)
    native = native or [10**6] * len(live)
    grad_norm = grad_norm or [0.0] * len(live)
    time = time or [float(k) for k in range(len(live))]
    boundaries = [{"event": "boundary", "iteration": k, "heap": heap[k], "graph": {"nodes": nodes[k], "saved": 0},
                   "native": native[k], "grad_norm": grad_norm[k], "time": time[k], "sampling_s": 0.0,
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
])
def test_inconclusive(original: RunOutcome, twin: Optional[RunOutcome], reason: str) -> None:
    judgement = judge(original, twin, WARMUP, 60)
    assert judgement.verdict == INCONCLUSIVE
    assert reason in judgement.reason
    assert judgement.inconclusive_reason in INCONCLUSIVE_REASONS


def test_a_graph_that_grows_is_confirmed_growth_in_host_memory() -> None:
    """A loss kept after backward: the storages grow alike (the loss's float), the graph does
    not: 7 nodes more per iteration, and the native heap (CPU storages excluded) 5,600 B more."""
    original = replay([0, 4, 8, 12, 16, 20], nodes=[0, 7, 14, 21, 28, 35],
                      native=[10**6 + 5604 * k for k in range(6)])
    twin = replay([0, 4, 8, 12, 16, 20], nodes=[0, 7, 7, 7, 7, 7], native=[10**6 + 4 * k for k in range(6)])
    judgement = judge(original, twin, WARMUP, 60)
    assert (judgement.verdict, judgement.growth_meter, judgement.memory) == (CONFIRMED_GROWTH, "graph", "host")
    assert (judgement.nodes_per_iteration, judgement.bytes_per_iteration) == (7, 5600)
    # 5,604 B of heap growth less 4 B of storage, minus the twin's 0
    assert judgement.native_bytes_per_iteration == 5600


def test_a_graph_whose_heap_reading_was_disturbed_is_priced_at_the_calibrated_cost_per_node() -> None:
    """The nodes are counted exactly; a native heap that reads as shrinking while they accumulate
    (glibc returned memory in those iterations) gives no price, and the calibration says so."""
    original = replay([0, 4, 8, 12, 16, 20], nodes=[0, 7, 14, 21, 28, 35],
                      native=[10**6 - 9000 * k for k in range(6)])
    twin = replay([0, 4, 8, 12, 16, 20], nodes=[0, 7, 7, 7, 7, 7], native=[10**6 + 4 * k for k in range(6)])
    judgement = judge(original, twin, WARMUP, 60)
    assert (judgement.verdict, judgement.growth_meter, judgement.nodes_per_iteration) == (CONFIRMED_GROWTH, "graph", 7)
    assert judgement.native_bytes_per_iteration == -9004
    assert judgement.bytes_per_iteration == 7 * CALIBRATED_BYTES_PER_NODE
    assert "at the calibrated 800 B per node (the native heap, -9,004 B per iteration in this run" in judgement.reason


def test_growing_storages_and_graph_are_both_said() -> None:
    original = replay([0, 8, 16, 24, 32, 40], nodes=[0, 3, 6, 9, 12, 15], native=[10**6 + 2408 * k for k in range(6)])
    judgement = judge(original, replay([0] * 6), WARMUP, 60)
    assert (judgement.verdict, judgement.growth_meter, judgement.bytes_per_iteration) == (
        CONFIRMED_GROWTH, "live-storage", 8)
    assert judgement.reason == ("live memory grows by 8 B per iteration more than with the fix, and the autograd graph "
                                "by 3 nodes per iteration, about 2,400 B of host memory (native heap) per iteration")


def test_a_graph_that_grows_in_some_iterations_only_is_not_growth() -> None:
    original = replay([0] * 6, nodes=[0, 7, 7, 14, 14, 21])
    assert judge(original, replay([0] * 6, nodes=[0, 7, 7, 7, 7, 7]), WARMUP, 60).verdict == NOT_REPRODUCED


def test_a_crashing_twin_is_a_broken_fix() -> None:
    """The fix's twin raised: its own verdict, with the exception and line; the original alone
    still confirms what it can (here: graph nodes kept in every iteration)."""
    crash = {"status": "error", "error": {"type": "AttributeError", "message": "'float' object has no attribute "
                                                                               "'item'", "line": 9}}
    judgement = judge(replay([0] * 6, nodes=[0, 3, 6, 9, 12, 15]), replay([0], status="error", end=crash),
                      WARMUP, 60)
    assert judgement.verdict == FIX_CRASHED and judgement.inconclusive_reason is None
    assert judgement.fix_error == "AttributeError at line 9: 'float' object has no attribute 'item'"
    assert (judgement.alone_verdict, judgement.nodes_per_iteration) == (CONFIRMED_GROWTH, 3)


def test_a_twin_that_dies_is_a_broken_fix() -> None:
    judgement = judge(replay([0, 1, 2, 3, 4, 5]), replay([0, 1], status="crashed", end={"signal": 11}), WARMUP, 60)
    assert judgement.verdict == FIX_CRASHED
    assert "twin died (signal 11) after iteration 1" in judgement.reason
    assert judgement.alone_verdict == INCONCLUSIVE  # 1 B per iteration, but no survivors


def test_an_error_at_the_flagged_line_that_the_fix_avoids_is_confirmed() -> None:
    error = {"status": "error", "error": {"type": "RuntimeError", "message": "a leaf Variable ...", "line": 16}}
    twin = replay([0, 1, 1, 1, 1, 1])
    judgement = judge(replay([0], status="error", end=error), twin, WARMUP, 60, "TML015", flagged_line=16)
    assert judgement.verdict == CONFIRMED_ERROR
    assert "raises RuntimeError at line 16: a leaf Variable" in judgement.reason
    # elsewhere than the flagged line it says nothing about the finding
    assert judge(replay([0], status="error", end=error), twin, WARMUP, 60, "TML015", flagged_line=17).verdict \
        == INCONCLUSIVE


def test_a_missing_zero_grad_costs_no_memory_but_wrong_updates() -> None:
    original = replay([0] * 6, grad_norm=[0, 1, 2, 3, 4, 5])
    twin = replay([0] * 6, grad_norm=[0, 1, 1, 1, 1, 1])
    judgement = judge(original, twin, WARMUP, 60, "TML002")
    assert judgement.verdict == NO_MEMORY_COST
    assert (judgement.grad_norm, judgement.twin_grad_norm) == (5, 1)
    assert judgement.reason.startswith("no memory cost: gradients accumulate in place")
    assert "the gradient norm is 5 against 1 with the fix, 5.0 times the fixed twin's" in judgement.reason


def test_growth_still_counts_for_a_rule_whose_usual_cost_is_not_memory() -> None:
    """TML002 with create_graph: the gradients' graphs grow."""
    assert judge(replay([0, 8, 16, 24, 32, 40]), replay([0] * 6), WARMUP, 60, "TML002").verdict == CONFIRMED_GROWTH


def test_empty_cache_costs_time() -> None:
    """Iteration times are the boundaries' distances less the time measuring took."""
    original = replay([0] * 6, time=[0.0, 0.012, 0.024, 0.036, 0.048, 0.060])
    twin = replay([0] * 6, time=[0.0, 0.010, 0.020, 0.030, 0.040, 0.050])
    judgement = judge(original, twin, WARMUP, 60, "TML009")
    assert (judgement.verdict, judgement.ms_per_iteration, judgement.twin_ms_per_iteration) == (NO_MEMORY_COST, 12, 10)
    assert "what it costs is time: 12.000 ms per iteration against 10.000 ms with the fix" in judgement.reason
    faster = judge(twin, original, WARMUP, 60, "TML009")
    assert "and here it costs no time either: 10.000 ms per iteration against 12.000 ms" in faster.reason


def test_without_a_twin_growth_without_survivors_is_reported_but_not_judged() -> None:
    """Growth that nothing keeps two iterations later may be a cache or a buffer that settles:
    without a twin it is reported, not confirmed."""
    judgement = judge(replay([0, 5, 10, 15, 20, 25]), None, WARMUP, 60)
    assert (judgement.verdict, judgement.original_bytes_per_iteration) == (INCONCLUSIVE, 5)
    assert judgement.inconclusive_reason == "no-twin"
    assert "no fix to compare with (the original alone grows by 5 B per iteration" in judgement.reason


def test_without_a_twin_survivors_and_growth_in_every_iteration_confirm() -> None:
    survivors = {"status": "capped", "survivor_iterations": [3],
                 "survivors": [{"iteration": 3, "line": 4, "device": "cpu", "storages": 1, "bytes": 5, "rounded": 512}]}
    judgement = judge(replay([0, 5, 10, 15, 20, 25], end=survivors), None, WARMUP, 60)
    assert (judgement.verdict, judgement.bytes_per_iteration, judgement.memory) == (CONFIRMED_GROWTH, 5, "host")
    assert "the original alone grows in every measured iteration (median 5 B) and keeps 5 B" in judgement.reason
    # one iteration that does not grow is not monotone growth
    assert judge(replay([0, 5, 10, 10, 20, 25], end=survivors), None, WARMUP, 60).verdict == INCONCLUSIVE


def cuda_replay(allocated: Sequence[int], storage: Sequence[int], host: Optional[Sequence[int]] = None) -> RunOutcome:
    """A CUDA replay: the allocator's count, and the live-storage meter's CUDA (and CPU) storages."""
    host = host or [0] * len(allocated)
    boundaries = [{"event": "boundary", "iteration": k, "heap": 0,
                   "cuda": {"allocated": allocated[k], "peak": allocated[k], "reserved": 0},
                   "storage": {"cuda": {"live": storage[k], "peak": storage[k], "allocated": 0,
                                        "live_rounded": allocated[k]},
                               "cpu": {"live": host[k], "peak": host[k], "allocated": 0, "live_rounded": 0}}}
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


def cuda_one_shot(before: int, after: int) -> RunOutcome:
    return cuda_replay([before, after], [before, after])


def test_a_one_time_device_cost() -> None:
    """torch.load without map_location: 273,920 B more allocated on the device right after it."""
    judgement = judge_one_time(cuda_one_shot(10_240, 284_160), cuda_one_shot(10_240, 10_240), 60)
    assert (judgement.verdict, judgement.one_time_bytes, judgement.memory) == (CONFIRMED_ONE_TIME, 273_920, "device")
    assert judge_one_time(cuda_one_shot(0, 512), cuda_one_shot(0, 512), 60).verdict == NOT_REPRODUCED


def test_a_one_time_device_cost_needs_cuda() -> None:
    judgement = judge_one_time(replay([0, 273_448]), replay([0, 273_448]), 60)
    assert (judgement.verdict, judgement.inconclusive_reason) == (INCONCLUSIVE, "needs-cuda")


def workers_replay(figures: Optional[dict], status: str = "capped", device: str = "cuda",
                   error: Optional[dict] = None) -> RunOutcome:
    """A TML010 replay: no boundaries, what ``WorkerWatch`` saw in its end record."""
    end = {"status": status, "iterations": 0, "workers": figures}
    if error:
        end["error"] = error
    return RunOutcome(status, [], {"device": device}, end)


def test_workers_holding_device_memory_confirm_a_one_time_cost() -> None:
    figures = {"cuda": True, "source": "nvml", "parent_bytes": 0, "processes": 3, "attributed": True,
               "workers": [{"pid": 11, "device_bytes": 547_356_672}, {"pid": 12, "device_bytes": 547_356_672}]}
    judgement = judge_workers(workers_replay(figures), 60)
    assert (judgement.verdict, judgement.memory, judgement.one_time_bytes) == (CONFIRMED_ONE_TIME, "device",
                                                                               1_094_713_344)
    assert "2 DataLoader worker process(es) hold device memory of their own, 1,094,713,344 B in all: 522 MiB " \
           "(pid 11), 522 MiB (pid 12), read by nvml" in judgement.reason
    assert judgement.workers == figures


def test_workers_whose_ids_are_not_the_replays_are_reported_as_such() -> None:
    figures = {"cuda": True, "source": "nvidia-smi", "parent_bytes": 0, "processes": 2, "attributed": False,
               "workers": [{"pid": 90211, "device_bytes": 2**29}]}
    judgement = judge_workers(workers_replay(figures), 60)
    assert judgement.verdict == CONFIRMED_ONE_TIME
    assert "another PID namespace" in judgement.reason


def test_the_forked_cuda_error_is_the_confirmation() -> None:
    error = {"type": "RuntimeError", "line": 17, "message": "Caught RuntimeError in DataLoader worker process 0.\n"
             "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, ..."}
    judgement = judge_workers(workers_replay({"cuda": True, "workers": []}, status="error", error=error), 60)
    assert judgement.verdict == CONFIRMED_ERROR
    assert "Cannot re-initialize CUDA in forked subprocess" in judgement.reason


@pytest.mark.parametrize("outcome, verdict, reason", [
    (workers_replay({"cuda": False}, status="finished", device="cpu"), INCONCLUSIVE, "no CUDA in this replay"),
    (workers_replay({"cuda": True, "processes": 2, "workers": []}, status="finished"), NOT_REPRODUCED,
     "the replay started 2 process(es), and none held device memory of its own"),
    (workers_replay({"cuda": True, "processes": 0, "workers": []}, status="finished"), NOT_REPRODUCED,
     "the replay started no worker process"),
    (workers_replay({"cuda": True, "workers": []}, status="error",
                    error={"type": "ValueError", "line": 3, "message": "bad"}), INCONCLUSIVE,
     "raised ValueError at line 3: bad"),
])
def test_other_worker_replays(outcome: RunOutcome, verdict: str, reason: str) -> None:
    judgement = judge_workers(outcome, 60)
    assert judgement.verdict == verdict
    assert reason in judgement.reason
    assert (verdict == INCONCLUSIVE) == (judgement.inconclusive_reason in INCONCLUSIVE_REASONS)


def test_predictions_kept_on_the_device_need_a_cuda_replay() -> None:
    """TML004's fix moves what is kept to the host; on the CPU `.cpu()` is the same storage, so
    the original and its twin keep the same: not a verdict on the finding, a replay that cannot
    show it."""
    keeps = replay([0, 640, 1280, 1920, 2560, 3200, 3840])
    judgement = judge(keeps, replay([0, 640, 1280, 1920, 2560, 3200, 3840]), WARMUP, 60, "TML004")
    assert (judgement.verdict, judgement.inconclusive_reason) == (INCONCLUSIVE, "needs-cuda")
    assert judgement.original_bytes_per_iteration == judgement.twin_bytes_per_iteration == 640
    assert judge(keeps, replay([0] * 7), WARMUP, 60, "TML004").verdict == CONFIRMED_GROWTH  # e.g. a graph dropped


def test_host_storages_kept_in_a_cuda_replay_are_host_growth() -> None:
    """A cache of CPU tensors (a dataset's cached samples) grows on the host, where the CUDA
    allocator does not look: the live-storage meter's CPU storages show it."""
    samples = [0, 64_064, 128_128, 192_192, 256_256, 320_320]
    original = cuda_replay([512] * 6, [4] * 6, host=samples)
    judgement = judge(original, cuda_replay([512] * 6, [4] * 6, host=[0] * 6), WARMUP, 60)
    assert (judgement.verdict, judgement.growth_meter, judgement.memory, judgement.bytes_per_iteration) == (
        CONFIRMED_GROWTH, "live-storage", "host", 64_064)
    assert judge(original, cuda_replay([512] * 6, [4] * 6, host=samples), WARMUP, 60).verdict == NOT_REPRODUCED
