"""Execution-checked fixes: every runnable fixture (fixtures/runnable/) fixed with
``fix --unsafe-fixes`` — all its findings' fixes together, as a user would apply them — and its
loop replayed on the CPU with ``verify``'s live-storage meter (the loop of each finding, as
``verify`` picks it on the original, found again in the fixed script). The fixed script must run
the loop (the replay reaches the iteration cap without an error) and no longer grow: what it
keeps per iteration is what the script keeps on purpose (its outputs, detached), never a graph.
The originals' growth, beside their fixes and hand-written twins, is test_verify_runnable_fixtures.py's;
test_fix_fixtures.py runs each fixed script to its end and compares what it prints.

Figures as there: batches of B = 16, float32 (4 B) values, int64 (8 B) labels."""
from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.verify.instrument import IterationScope, instrument
from torchmemlint.verify.runner import Limits, RunOutcome, RunRequest
from torchmemlint.verify.verdict import series
from torchmemlint.verify.verifier import scope_of

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_fixed_runnable_fixtures")]
RUNNABLE = Path(__file__).resolve().parents[2] / "fixtures" / "runnable"
F32, I64, B = 4, 8, 16
LOGITS = F32 * B * 10
WARMUP, CAP = 2, 6  # iterations 3..6 measured: enough to see one step's graph kept, and fast
LIMITS = Limits(device="cpu", timeout_s=60, memory_limit=2**30)

# What a fixed script still keeps per iteration, on purpose; everything else keeps nothing.
KEPT_ON_PURPOSE = {
    # the evaluation's outputs (B x 10 logits), collected for the bincount after the loop
    "tml001_eval_keeps_outputs.py": LOGITS,
    "tml004_predictions_on_device.py": LOGITS,
    # the collected embeddings (Linear(32, 256)), concatenated after the loop
    "tml008_concat_accumulator.py": F32 * B * 256,
    # each detached loss (`.detach()` keeps the storage of the loss: 4 B for cross_entropy, the
    # B x 10 squared errors whose 0-dim mean is a view of them for mse_loss)
    "tml001_train_keeps_loss.py": F32,
    "tml001_train_keeps_mse_loss.py": LOGITS,
    # the predicted labels (B int64) the script collects for its bincount
    "tml005_rnn_state.py": I64 * B,
    # the saliency maps (the input's gradient, B x 32)
    "tml020_backward_for_input_gradient.py": F32 * B * 32,
}
# Fixtures whose rule has no automatic fix (verify uses their hand-written twins; TML010's
# findings are judged on the original alone: the workers' device memory, or their error).
NOT_FIXED = {"tml012_cached_tensor_function.py", "tml019_module_stores_activation.py", "tml010_cuda_in_worker.py",
             "tml010_cuda_before_fork.py"}
FIXTURES = sorted(p for p in RUNNABLE.glob("*.py") if not p.name.endswith(".correct.py"))


@pytest.fixture(scope="session")
def fixed_replays(replay_server) -> dict[str, list[tuple[IterationScope, RunOutcome]]]:
    """Each fixed fixture's replays, one per loop (or function, or one-shot statement) that
    ``verify`` replays for its findings."""
    replays: dict[str, list[tuple[IterationScope, RunOutcome]]] = {}
    for path in FIXTURES:
        source = path.read_bytes()
        fixed = fix_source(source, str(path), ALL_RULES, unsafe=True)
        assert not fixed.error, fixed.error
        if fixed.source == source:
            continue
        diagnostics, _ = check_source(source, str(path), ALL_RULES)
        scopes = {scope_of(source.decode("utf-8"), d) for d in diagnostics}
        for scope in sorted(scopes, key=lambda s: (s.kind, s.index)):
            request = RunRequest(instrument(fixed.source.decode("utf-8"), scope), str(path), cap=CAP, warmup=WARMUP)
            replays.setdefault(path.name, []).append((scope, replay_server.run(request, LIMITS)))
    return replays


def test_every_runnable_fixture_is_fixed_or_listed(fixed_replays) -> None:
    assert {p.name for p in FIXTURES} - set(fixed_replays) == NOT_FIXED


@pytest.mark.parametrize("path", [p for p in FIXTURES if p.name not in NOT_FIXED], ids=lambda p: p.name)
def test_fixed_fixture_runs_and_no_longer_grows(fixed_replays, path: Path) -> None:
    for scope, outcome in fixed_replays[path.name]:
        if scope.kind == "statement":  # a one-time cost (TML011): the fixed statement runs
            assert outcome.status in ("capped", "finished"), (outcome.end, outcome.stderr_tail)
            continue
        assert outcome.status == "capped", (outcome.end, outcome.stderr_tail)  # ran the loop, no error
        live = series(outcome, "live-storage")
        growth = statistics.median(live.growth(k) for k in range(WARMUP + 1, CAP + 1))
        assert growth == KEPT_ON_PURPOSE.get(path.name, 0)
