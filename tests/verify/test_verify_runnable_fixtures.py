"""``verify`` on every runnable fixture (fixtures/runnable/): the linter's findings, replayed on
the CPU with the live-storage meter, whose byte counts are exact. Every expected figure below is
derived from the fixture's shapes: batches of B = 16, an MLP 32 -> 64 -> 10 unless said
otherwise, float32 (4 B) values and int64 (8 B) labels.

All fixtures are verified together, in one replay server, once per test session."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.verdict import CONFIRMED_GROWTH, CONFIRMED_PEAK_EXCESS, NOT_REPRODUCED
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings

pytestmark = pytest.mark.slow
RUNNABLE = Path(__file__).resolve().parents[2] / "fixtures" / "runnable"
F32, I64, B = 4, 8, 16


@dataclass(frozen=True)
class Expected:
    verdict: str
    bytes_per_iteration: int  # original minus twin
    original_bytes_per_iteration: Optional[int] = None
    twin_bytes_per_iteration: Optional[int] = None
    peak_excess_bytes: Optional[int] = None
    retained_by: Optional[str] = None  # the script-level name credited with the survivors


# What a grad-enabled forward of the MLP saves for backward: its input (for the first weight's
# gradient) and the ReLU output (ReLU's own result, also the second layer's input).
MLP_SAVED = F32 * (B * 32 + B * 64)
LOGITS = F32 * B * 10

EXPECTED = {
    # The graph of each kept output keeps MLP_SAVED; the twins (`.detach()`, or no_grad around
    # the loop) keep the outputs only.
    ("tml001_eval_keeps_outputs.py", "TML001"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED, original_bytes_per_iteration=MLP_SAVED + LOGITS,
        twin_bytes_per_iteration=LOGITS, retained_by="outputs"),
    ("tml001_eval_keeps_outputs.py", "TML003"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED, original_bytes_per_iteration=MLP_SAVED + LOGITS,
        twin_bytes_per_iteration=LOGITS, retained_by="outputs"),
    # The running total chains every batch's graph: MLP_SAVED, log_softmax's saved result (B x
    # 10), nll_loss's saved target (B int64) and its 0-dim total weight. `.item()` keeps nothing.
    ("tml001_eval_accumulates_loss.py", "TML001"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED + LOGITS + I64 * B + F32, twin_bytes_per_iteration=0, retained_by="val_loss"),
    ("tml001_eval_accumulates_loss.py", "TML003"): Expected(
        CONFIRMED_GROWTH, MLP_SAVED + LOGITS + I64 * B + F32, twin_bytes_per_iteration=0, retained_by="val_loss"),
    # After backward only the loss's own storage stays: 4 B for cross_entropy, the whole B x 10
    # buffer of squared errors for mse_loss (its 0-dim result is a view of it). `.detach()` keeps
    # the same storage, so the fix changes nothing measurable.
    ("tml001_train_keeps_loss.py", "TML001"): Expected(
        NOT_REPRODUCED, 0, original_bytes_per_iteration=F32, twin_bytes_per_iteration=F32, peak_excess_bytes=0),
    ("tml001_train_keeps_mse_loss.py", "TML001"): Expected(
        NOT_REPRODUCED, 0, original_bytes_per_iteration=LOGITS, twin_bytes_per_iteration=LOGITS, peak_excess_bytes=0),
    # No growth. With the reset (set_to_none) the twin's backward finds no .grad buffers: at its
    # peak (the first layer's weight gradient) only the second layer's gradients exist, while
    # the original holds all of them: the first layer's weight and bias gradients more.
    ("tml002_missing_zero_grad.py", "TML002"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * (32 * 64 + 64)),
    # MLP 32 -> 256 -> 256 -> 10. At the original's peak (its second ReLU) the previous batch's
    # graph still holds its two saved 16 x 256 ReLU outputs (`logits` is rebound only after the
    # forward), plus this batch's input and first ReLU output, saved: 2,048 + 3 x 16,384 B above
    # the twin's peak (two 16 x 256 buffers at a time, nothing saved).
    ("tml003_eval_without_no_grad.py", "TML003"): Expected(
        CONFIRMED_PEAK_EXCESS, 0, peak_excess_bytes=F32 * (B * 32 + 3 * B * 256)),
    # On the CPU, `.cpu()` returns the same tensor: both keep B x 10 logits per iteration. The
    # cost is device memory, which only a CUDA run shows.
    ("tml004_predictions_on_device.py", "TML004"): Expected(
        NOT_REPRODUCED, 0, original_bytes_per_iteration=LOGITS, twin_bytes_per_iteration=LOGITS, peak_excess_bytes=0),
}


@pytest.fixture(scope="session")
def verified(replay_server) -> dict[tuple[str, str], VerifyResult]:
    files = []
    for path in sorted(RUNNABLE.glob("*.py")):
        source = path.read_bytes()
        diagnostics, errors = check_source(source, str(path), ALL_RULES)
        assert not errors
        files.append(FileFindings.from_source(str(path), source, diagnostics))
    settings = Settings(limits=Limits(device="cpu", timeout_s=120, memory_limit=2**30))
    results = verify_findings(files, settings, server=replay_server)
    return {(Path(r.diagnostic.path).name, r.diagnostic.code): r for r in results}


def test_every_finding_of_every_runnable_fixture_has_an_expectation(verified) -> None:
    assert set(verified) == set(EXPECTED)


@pytest.mark.parametrize("key", sorted(EXPECTED), ids=lambda key: f"{key[0]}:{key[1]}")
def test_runnable_fixture(verified, key: tuple[str, str]) -> None:
    expected, result = EXPECTED[key], verified[key]
    judgement = result.judgement
    assert result.verdict == expected.verdict, result.explanation
    assert (result.meter, result.device) == ("live-storage", "cpu")
    assert result.original.status == result.twin.status == "capped"
    assert judgement.measured == list(range(3, 11))
    assert judgement.bytes_per_iteration == expected.bytes_per_iteration
    for name in ("original_bytes_per_iteration", "twin_bytes_per_iteration", "peak_excess_bytes"):
        if getattr(expected, name) is not None:
            assert getattr(judgement, name) == getattr(expected, name), name
    if expected.retained_by:
        assert result.retained_by[0]["name"] == expected.retained_by
        assert f"Kept alive by `{expected.retained_by}`" in result.explanation
