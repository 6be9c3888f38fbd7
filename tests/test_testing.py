"""``torchmemlint.testing``: ``assert_no_memory_growth`` on every runnable fixture that keeps
memory per iteration (fixtures/runnable/), and on its twin, which does not.

Each fixture's loop body is the step (``runnable_steps.fixture_step``). The expected bytes are
the ones ``tests/verify/test_verify_runnable_fixtures.py`` derives from the fixtures' shapes
(batches of B = 16, an MLP 32 -> 64 -> 10, float32 values and int64 labels); here they are what
the original keeps per call on its own, not its difference from the twin. A fixture whose
results are meant to be kept (predictions, labels) is checked with that much tolerance: the
twin keeps them too and passes; the original keeps more and fails."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from runnable_steps import fixture_step
from support import FIXTURES
from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.testing import assert_no_memory_growth, memory_budget
from torchmemlint.verify.verifier import FileFindings

torch = pytest.importorskip("torch")
# tml013's backward(create_graph=True) is the antipattern that torch warns about.
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")

RUNNABLE = FIXTURES / "runnable"
F32, I64, B = 4, 8, 16
MLP_SAVED = F32 * (B * 32 + B * 64)  # a grad-enabled forward saves its input and the ReLU output
LOGITS = F32 * B * 10


@dataclass(frozen=True)
class Leak:
    fixture: str
    bytes_per_call: int  # what the original keeps per call
    twin: str  # "TML00x": the finding's own fix; "file": NAME.correct.py
    tolerance_bytes: int = 0  # what the step is meant to keep
    kept_by: str = ""  # the retention path's start, when a name keeps the growth
    cycles: bool = False  # kept by reference cycles only


LEAKS = [
    # The twin evaluates under no_grad (TML003's fix) and keeps the outputs only.
    Leak("tml001_eval_keeps_outputs", MLP_SAVED + LOGITS, "TML003", LOGITS, "namespace['outputs']"),
    Leak("tml001_eval_accumulates_loss", MLP_SAVED + LOGITS + I64 * B + F32, "TML001", 0, "namespace['val_loss']"),
    Leak("tml005_rnn_state", F32 * (B * 32 + B * 64) + I64 * B, "TML005", I64 * B, "namespace['h']"),
    Leak("tml006_retain_graph", MLP_SAVED + LOGITS + I64 * B + 2 * F32, "file", 0, "namespace['history']"),
    Leak("tml007_hook_in_loop", F32 * B * 64, "file", 0, "namespace['model']"),
    # The lru_cache's entries live in C, where the retention walk does not see: no name is credited.
    Leak("tml012_cached_tensor_function", F32 * 2 * B * 32, "file"),
    Leak("tml013_create_graph", F32 * (B * 32 + B * 64 + B * 10) + I64 * B + F32 * (2 * B * 10 + B * 64), "file", 0,
         "namespace['model']"),
    Leak("tml018_ctx_tensor", F32 * B * 64, "TML018", 0, cycles=True),
]


def twin_source(leak: Leak) -> str:
    path = RUNNABLE / f"{leak.fixture}.py"
    if leak.twin == "file":
        return path.with_name(f"{leak.fixture}.correct.py").read_text(encoding="utf-8")
    source = path.read_bytes()
    diagnostics, _ = check_source(source, str(path), ALL_RULES)
    finding = next(d for d in diagnostics if d.code == leak.twin)
    twin, origin = FileFindings.from_source(str(path), source, diagnostics).twin_of(finding)
    assert origin == "fix"
    return twin


@pytest.mark.parametrize("leak", LEAKS, ids=lambda leak: leak.fixture)
def test_fails_on_the_leaking_fixture_with_its_bytes(leak: Leak) -> None:
    path = RUNNABLE / f"{leak.fixture}.py"
    step, _ = fixture_step(path.read_text(encoding="utf-8"), str(path))
    with pytest.raises(AssertionError) as failure:
        assert_no_memory_growth(step, iterations=4, tolerance_bytes=leak.tolerance_bytes, device="cpu")
    growth = failure.value.growth
    assert growth.devices["cpu"].bytes_per_call == leak.bytes_per_call
    message = str(failure.value)
    assert f"cpu: +{leak.bytes_per_call:,} B per call (live-storage meter" in message
    assert f"{path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}:" in message
    if leak.kept_by:
        assert growth.retained_by[0]["name"] == leak.kept_by, message
    if leak.cycles:
        assert growth.cycle_bytes_per_call == leak.bytes_per_call
        assert "reference cycles" in message


@pytest.mark.parametrize("leak", LEAKS, ids=lambda leak: leak.fixture)
def test_passes_on_the_twin(leak: Leak) -> None:
    step, _ = fixture_step(twin_source(leak), str(RUNNABLE / f"{leak.fixture}.py"))
    growth = assert_no_memory_growth(step, iterations=4, tolerance_bytes=leak.tolerance_bytes, device="cpu")
    assert not growth.failed
    assert growth.devices["cpu"].bytes_per_call == leak.tolerance_bytes
    assert growth.nodes_per_call == 0


def test_memory_budget_around_a_loop_of_ones_own() -> None:
    model = torch.nn.Linear(8, 4)
    kept = []
    with pytest.raises(AssertionError) as failure:
        with memory_budget(per_iteration=0) as budget:
            for _ in range(6):
                budget.step()
                kept.append(model(torch.randn(2, 8)))  # the output (2 x 4) and the saved input (2 x 8)
    assert failure.value.growth.devices["cpu"].bytes_per_call == F32 * (2 * 4 + 2 * 8)
    assert "kept alive by:\n  kept: " in str(failure.value)
    assert "test_testing.py:" in str(failure.value) and "kept.append(model(torch.randn(2, 8)))" in str(failure.value)

    with memory_budget(per_iteration=0) as budget:
        for _ in range(6):
            budget.step()
            kept.append(model(torch.randn(2, 8)).detach().sum().item())
    assert budget.result is not None and not budget.result.failed


def test_a_graph_kept_without_device_bytes_still_fails() -> None:
    """A training loss summed as a tensor: after backward its saved tensors are freed, and the
    running total is one 4-byte storage updated in place; what piles up is the chain of graph
    nodes (host memory)."""
    model = torch.nn.Linear(8, 1)
    total = torch.zeros(())

    def step() -> None:
        nonlocal total
        loss = model(torch.randn(4, 8)).pow(2).mean()
        loss.backward()
        total += loss

    with pytest.raises(AssertionError) as failure:
        assert_no_memory_growth(step)
    assert failure.value.growth.devices["cpu"].bytes_per_call == 0
    assert failure.value.growth.nodes_per_call > 0


@pytest.mark.parametrize("options, message", [
    ({"iterations": 1}, "iterations must be a number >= 2"),
    ({"warmup": -1}, "warmup must be a number of calls >= 0"),
    ({"tolerance_bytes": -5}, "the tolerance must be a number of bytes >= 0"),
])
def test_bad_options_are_named(options, message) -> None:
    with pytest.raises(ValueError, match=message):
        assert_no_memory_growth(lambda: None, **options)


def test_importing_testing_imports_no_torch() -> None:
    code = "import sys, torchmemlint.testing, torchmemlint.pytest_plugin; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
