"""``verify`` on every runnable fixture (fixtures/runnable/): the linter's findings, replayed on
the CPU with the live-storage meter, whose byte counts are exact. Every expected figure below is
derived from the fixture's shapes: batches of B = 16, an MLP 32 -> 64 -> 10 unless said
otherwise, float32 (4 B) values and int64 (8 B) labels.

The twin of a finding is made from its own fix; a finding without a fix is compared with the
fixture's hand-written twin, ``NAME.correct.py`` (the whole script done right).

All fixtures are verified together, in one replay server, once per test session."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.verdict import (
    CALIBRATED_BYTES_PER_NODE, CONFIRMED_ERROR, CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, INCONCLUSIVE,
    INCONCLUSIVE_REASONS, NO_MEMORY_COST, heap_disturbed,
)
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_verify_runnable_fixtures")]
RUNNABLE = Path(__file__).resolve().parents[2] / "fixtures" / "runnable"
F32, I64, B = 4, 8, 16


@dataclass(frozen=True)
class Expected:
    verdict: str
    bytes_per_iteration: Optional[int]  # original minus twin; None: from the native heap, not exact (> 0)
    original_bytes_per_iteration: Optional[int] = None
    twin_bytes_per_iteration: Optional[int] = None
    peak_excess_bytes: Optional[int] = None
    live_excess_bytes: Optional[int] = None  # held more between iterations, without growing
    allocated_excess_bytes: Optional[int] = None
    retained_by: Optional[str] = None  # the script-level name credited with the survivors
    twin_origin: str = "fix"  # "": no twin, the original alone is judged
    growth_meter: Optional[str] = None
    nodes_per_iteration: Optional[int] = None  # the graph meter: autograd nodes kept per iteration


# What a grad-enabled forward of the MLP saves for backward: its input (for the first weight's
# gradient) and the ReLU output (ReLU's own result, also the second layer's input).
MLP_SAVED = F32 * (B * 32 + B * 64)
LOGITS = F32 * B * 10

PARAMETERS = F32 * (32 * 64 + 64 + 64 * 10 + 10)  # the MLP's parameters, and so its .grad buffers

EXPECTED = {
    # The graph of each kept output keeps MLP_SAVED; the twins (`.detach()`: the outputs go into a
    # list that `torch.cat` joins, so they are tensors; or no_grad around the loop) keep the
    # outputs only.
    ("tml001_eval_keeps_outputs.py", "TML001"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED, original_bytes_per_iteration=MLP_SAVED + LOGITS,
        twin_bytes_per_iteration=LOGITS, retained_by="outputs", growth_meter="live-storage"),
    ("tml001_eval_keeps_outputs.py", "TML003"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED, original_bytes_per_iteration=MLP_SAVED + LOGITS,
        twin_bytes_per_iteration=LOGITS, retained_by="outputs", growth_meter="live-storage"),
    # The running total chains every batch's graph: MLP_SAVED, log_softmax's saved result (B x
    # 10), nll_loss's saved target (B int64) and its 0-dim total weight. `.item()` keeps nothing.
    ("tml001_eval_accumulates_loss.py", "TML001"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED + LOGITS + I64 * B + F32, twin_bytes_per_iteration=0, retained_by="val_loss"),
    ("tml001_eval_accumulates_loss.py", "TML003"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED + LOGITS + I64 * B + F32, twin_bytes_per_iteration=0, retained_by="val_loss"),
    # After backward the storages no longer grow apart: the loss's own storage stays (4 B for
    # cross_entropy; for mse_loss the whole B x 10 buffer of squared errors, which its 0-dim
    # result views), and the `.detach()` fix keeps it too. What grows is the graph: each kept
    # loss holds its nodes (host memory): for cross_entropy NllLoss, LogSoftmax, two Addmm, two
    # T (the weights' transposes) and Relu, 7; for mse_loss MseLoss instead of the first two, 6.
    # (The four AccumulateGrad nodes of the parameters are shared by every graph.)
    ("tml001_train_keeps_loss.py", "TML001"): Expected(
        CONFIRMED_GROWTH, None, original_bytes_per_iteration=F32, twin_bytes_per_iteration=F32, peak_excess_bytes=0,
        growth_meter="graph", nodes_per_iteration=7, retained_by="losses"),
    ("tml001_train_keeps_mse_loss.py", "TML001"): Expected(
        CONFIRMED_GROWTH, None, original_bytes_per_iteration=LOGITS, twin_bytes_per_iteration=LOGITS,
        peak_excess_bytes=0, growth_meter="graph", nodes_per_iteration=6, retained_by="losses"),
    # No growth: gradients accumulate in place, and the verdict says it costs no memory; the
    # updates are what it costs (the gradient norm, asserted below). The fix resets the gradients
    # (set_to_none) just before backward. The original's peak is in backward, on top of the .grad
    # buffers both hold between steps: the first layer's weight and bias gradients being
    # computed, the gradient flowing into the ReLU (B x 64) and the loss's seed (one float). The
    # twin has freed its buffers by then, so its peak is the forward pass's two B x 64 activations.
    ("tml002_missing_zero_grad.py", "TML002"): Expected(
        NO_MEMORY_COST, 0, peak_excess_bytes=F32 * (32 * 64 + 64 + B * 64 + 1) - F32 * 2 * B * 64,
        live_excess_bytes=0),
    # MLP 32 -> 256 -> 256 -> 10. At the original's peak (its second ReLU) the previous batch's
    # graph still holds its two saved B x 256 ReLU outputs (`logits` is rebound only after the
    # forward), plus this batch's input and first ReLU output, saved: B x 32 + 3 x B x 256 floats
    # above the twin's peak (two B x 256 buffers at a time, nothing saved). Between iterations the
    # original holds the previous graph's two ReLU outputs.
    ("tml003_eval_without_no_grad.py", "TML003"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * (B * 32 + 3 * B * 256), live_excess_bytes=F32 * 2 * B * 256),
    # RNNCell(32, 64) on a stream, no backward: each step's graph keeps its input (for the input
    # weights' gradient) and its tanh output, and links to the previous step's. Both keep the
    # B int64 labels.
    ("tml005_rnn_state.py", "TML005"): Expected(
        CONFIRMED_GROWTH, F32 * (B * 32 + B * 64), original_bytes_per_iteration=F32 * (B * 32 + B * 64) + I64 * B,
        twin_bytes_per_iteration=I64 * B, retained_by="h"),
    # retain_graph=True and the loss kept: each step's whole graph stays (as for the validation
    # total above) plus the loss's own float and nll_loss's saved 0-dim total weight. The TML006
    # fix alone (no retain_graph) frees what the graph saved; the history still keeps each loss's
    # float. The TML001 fix alone (`.item()`: the history is only counted) keeps Python numbers,
    # which frees the graph just as well, retained or not.
    ("tml006_retain_graph.py", "TML006"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED + LOGITS + I64 * B + F32, twin_bytes_per_iteration=F32,
        retained_by="history"),
    ("tml006_retain_graph.py", "TML001"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED + LOGITS + I64 * B + 2 * F32, twin_bytes_per_iteration=0, retained_by="history"),
    # MLP 32 -> 256 -> 256 -> 10, the only backward retaining its graph, nothing kept: between
    # iterations `logits` and `loss` hold what the graph saved, which a plain backward frees (the
    # two B x 256 ReLU outputs, log_softmax's B x 10 result, nll_loss's 0-dim total weight; the
    # input is held by `x` either way). At the peak, during the next forward, the graph still
    # holds the previous batch (x: B x 32 floats, y: B int64) as well, which the twin has let go.
    ("tml006_retained_peak.py", "TML006"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * (2 * B * 256 + B * 10 + 1 + B * 32) + I64 * B,
        live_excess_bytes=F32 * (2 * B * 256 + B * 10 + 1)),
    # Every old hook's list receives every new ReLU output (B x 64); the fix removes each
    # iteration's hook at its end, so each list dies with its iteration. The survivors are found
    # through the module's hooks and their closures.
    ("tml007_hook_in_loop.py", "TML007"): Expected(
        CONFIRMED_GROWTH, F32 * B * 64, twin_bytes_per_iteration=0, retained_by="model"),
    # Linear(32, 256) embeddings under no_grad. Both keep B x 256 floats per iteration; at
    # iteration k the original also holds the old accumulator (k - 1 rows of batches) beside the
    # new one (k) and allocates the new one: k x B x 256 floats more than the twin's list, at the
    # median k of the window 3..10, 6.5.
    ("tml008_concat_accumulator.py", "TML008"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, original_bytes_per_iteration=F32 * B * 256, twin_bytes_per_iteration=F32 * B * 256,
        peak_excess_bytes=int(6.5 * F32 * B * 256), allocated_excess_bytes=int(6.5 * F32 * B * 256)),
    # empty_cache() frees no live memory (and does nothing on the CPU): its cost is time.
    ("tml009_empty_cache_in_loop.py", "TML009"): Expected(NO_MEMORY_COST, 0, peak_excess_bytes=0),
    # The cache keeps each batch (its key) and the standardized result, B x 32 floats each.
    ("tml012_cached_tensor_function.py", "TML012"): Expected(
        CONFIRMED_GROWTH, F32 * 2 * B * 32, twin_bytes_per_iteration=0, twin_origin="file"),
    # Without a reset the gradients accumulate with their graphs, which keep what the double
    # backward needs: the input, labels, tanh and log_softmax outputs of the forward, and the
    # gradients that flowed into the logits, the log_softmax and the tanh output. The TML002 fix
    # (a reset before backward) and the hand-written twin both drop them.
    ("tml013_create_graph.py", "TML002"): Expected(
        CONFIRMED_GROWTH, F32 * (B * 32 + B * 64 + B * 10) + I64 * B + F32 * (2 * B * 10 + B * 64),
        twin_bytes_per_iteration=0, retained_by="model"),
    ("tml013_create_graph.py", "TML013"): Expected(
        CONFIRMED_GROWTH, F32 * (B * 32 + B * 64 + B * 10) + I64 * B + F32 * (2 * B * 10 + B * 64),
        twin_bytes_per_iteration=0, retained_by="model", twin_origin="file"),
    # The bare torch.no_grad() changes nothing: the same evaluation as tml003's, the same excess.
    ("tml014_no_grad_without_with.py", "TML014"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * (B * 32 + 3 * B * 256), live_excess_bytes=F32 * 2 * B * 256),
    ("tml014_no_grad_without_with.py", "TML003"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * (B * 32 + 3 * B * 256), live_excess_bytes=F32 * 2 * B * 256),
    # The "frozen" backbone (Linear(32, 256)) gets .grad buffers, kept between steps.
    ("tml016_module_requires_grad.py", "TML016"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, live_excess_bytes=F32 * (32 * 256 + 256)),
    # The reference cycle output -> ctx -> output keeps each B x 64 tanh output until Python's
    # cycle collector runs (a few times in the replay; the median iteration keeps one).
    ("tml018_ctx_tensor.py", "TML018"): Expected(CONFIRMED_GROWTH, F32 * B * 64, twin_bytes_per_iteration=0),
    # forward() keeps its B x 64 hidden activation until the next call replaces it. Each call is
    # an iteration here (the finding is in forward, outside any loop).
    ("tml019_module_stores_activation.py", "TML019"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * B * 64, live_excess_bytes=F32 * B * 64,
        twin_origin="file"),
    # backward() also computes (and allocates) every parameter's gradient, and keeps .grad
    # buffers; backward(inputs=[x]) computes only the input's.
    ("tml020_backward_for_input_gradient.py", "TML020"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, live_excess_bytes=PARAMETERS, allocated_excess_bytes=PARAMETERS),
}
# TML015's manual update in place on a leaf is an error at the flagged line at the first step,
# which the fix (the update under no_grad) avoids: that error is the confirmation.
ERRORS = {("tml015_param_update_outside_no_grad.py", "TML015"): "raises RuntimeError at line 16: a leaf Variable",
          # the memory on `self` chains each step's graph to the previous one, which the last
          # backward freed: the second backward fails (the fix detaches the old memory it reads)
          ("tml005_module_returns_its_state.py", "TML005"): "raises RuntimeError at line 28: Trying to backward"}
# Inconclusive in a CPU replay, and why. Device memory, which a CPU replay cannot show: TML011 loads onto the CPU with or without the fix;
# TML004's `.cpu()` returns the same tensor on the CPU, so both keep B x 10 logits per iteration.
# TML010's is CUDA in DataLoader workers (a context per worker, or the forked-CUDA error): no CUDA, no run.
INCONCLUSIVE_HERE = {("tml011_torch_load_without_map_location.py", "TML011"): "needs-cuda",
                       # the same line's TML005 error, which TML019 (no fix, no twin) cannot claim
                       ("tml005_module_returns_its_state.py", "TML019"): "original-failed",
                       ("tml004_predictions_on_device.py", "TML004"): "needs-cuda",
                       ("tml010_cuda_in_worker.py", "TML010"): "no-cuda",
                       ("tml010_cuda_before_fork.py", "TML010"): "no-cuda"}


@pytest.fixture(scope="session")
def verified(replay_server) -> dict[tuple[str, str], VerifyResult]:
    files = []
    for path in sorted(RUNNABLE.glob("*.py")):
        if path.name.endswith(".correct.py"):
            continue
        source = path.read_bytes()
        diagnostics, errors = check_source(source, str(path), ALL_RULES)
        assert not errors
        twin = path.with_name(path.stem + ".correct.py")
        files.append(FileFindings.from_source(str(path), source, diagnostics,
                                              twin.read_bytes() if twin.exists() else None))
    settings = Settings(limits=Limits(device="cpu", timeout_s=120, memory_limit=2**30))
    results = verify_findings(files, settings, server=replay_server)
    return {(Path(r.diagnostic.path).name, r.diagnostic.code): r for r in results}


def test_every_finding_of_every_runnable_fixture_has_an_expectation(verified) -> None:
    assert set(verified) == set(EXPECTED) | set(ERRORS) | set(INCONCLUSIVE_HERE)


def test_every_inconclusive_verdict_names_its_reason(verified) -> None:
    for result in verified.values():
        assert (result.verdict == INCONCLUSIVE) == (result.judgement.inconclusive_reason in INCONCLUSIVE_REASONS)


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda key: f"{key[0]}:{key[1]}")
def test_runnable_fixture(verified, key: tuple[str, str]) -> None:
    expected, result = EXPECTED[key], verified[key]
    judgement = result.judgement
    assert result.verdict == expected.verdict, result.explanation
    assert (result.meter, result.device) == ("live-storage", "cpu")
    assert result.original.status == "capped"
    assert result.twin_origin == expected.twin_origin
    assert result.twin is None if not expected.twin_origin else result.twin.status == "capped"
    assert judgement.measured == list(range(3, 11))
    if expected.bytes_per_iteration is None:
        # from the native heap; from the calibration only where the heap read as not growing twice
        assert judgement.bytes_per_iteration == (judgement.native_bytes_per_iteration if not heap_disturbed(judgement)
                                                 else judgement.nodes_per_iteration * CALIBRATED_BYTES_PER_NODE) > 0
    else:
        assert judgement.bytes_per_iteration == expected.bytes_per_iteration
    for name in ("original_bytes_per_iteration", "twin_bytes_per_iteration", "peak_excess_bytes", "live_excess_bytes",
                 "allocated_excess_bytes", "growth_meter", "nodes_per_iteration"):
        if getattr(expected, name) is not None:
            assert getattr(judgement, name) == getattr(expected, name), name
    if expected.retained_by:
        assert result.retained_by[0]["name"] == expected.retained_by
        assert f"Kept alive by `{expected.retained_by}`" in result.explanation


def test_a_graph_kept_after_backward_costs_host_memory(verified) -> None:
    """The graph's nodes are host memory: in the CPU replay, native-heap bytes per node for both
    losses of the order the docs calibrate (glibc's allocator: 700 to 900 B per node on a quiet
    run). The upper bound allows one page per node: glibc may take a new page or arena in the
    middle of a run on a loaded machine, which once read 2,755 B per node in CI here. It may also
    return memory in those iterations (-9,584 B per iteration once in CI): verify then replays the
    pair again, and prices from the calibration only if the heap is disturbed again; both losses
    so disturbed would be a meter that does not work."""
    priced = 0
    for name, nodes in (("tml001_train_keeps_loss.py", 7), ("tml001_train_keeps_mse_loss.py", 6)):
        judgement = verified[(name, "TML001")].judgement
        assert judgement.memory == "host"
        assert "autograd graph grows by" in verified[(name, "TML001")].explanation
        if not heap_disturbed(judgement):
            assert 500 * nodes <= judgement.native_bytes_per_iteration <= 4096 * nodes
            priced += 1
    assert priced >= 1


def test_a_missing_zero_grad_costs_wrong_updates(verified) -> None:
    judgement = verified[("tml002_missing_zero_grad.py", "TML002")].judgement
    assert judgement.grad_norm > 2 * judgement.twin_grad_norm > 0
    assert verified[("tml002_missing_zero_grad.py", "TML002")].explanation.startswith("No memory cost: ")


def test_empty_cache_costs_time(verified) -> None:
    judgement = verified[("tml009_empty_cache_in_loop.py", "TML009")].judgement
    assert judgement.ms_per_iteration > 0 and judgement.twin_ms_per_iteration > 0
    assert "ms per iteration against" in verified[("tml009_empty_cache_in_loop.py", "TML009")].explanation


@pytest.mark.parametrize("key", sorted(ERRORS), ids=lambda key: f"{key[0]}:{key[1]}")
def test_runnable_fixture_that_fails(verified, key: tuple[str, str]) -> None:
    result = verified[key]
    assert result.verdict == CONFIRMED_ERROR
    assert ERRORS[key] in result.explanation
    assert result.original.status == "error" and result.twin.status == "capped"


@pytest.mark.parametrize("key", sorted(INCONCLUSIVE_HERE), ids=lambda key: f"{key[0]}:{key[1]}")
def test_runnable_fixture_inconclusive_on_the_cpu(verified, key: tuple[str, str]) -> None:
    result = verified[key]
    assert (result.verdict, result.judgement.inconclusive_reason) == (INCONCLUSIVE, INCONCLUSIVE_HERE[key])


def test_predictions_kept_on_the_device_need_a_cuda_replay(verified) -> None:
    judgement = verified[("tml004_predictions_on_device.py", "TML004")].judgement
    assert (judgement.original_bytes_per_iteration, judgement.twin_bytes_per_iteration) == (LOGITS, LOGITS)
    assert judgement.bytes_per_iteration == 0 and judgement.peak_excess_bytes == 0
    assert f"the original keeps {LOGITS:,} B per iteration here); replay on CUDA" in judgement.reason
