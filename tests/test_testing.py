"""``torchmemlint.testing``: ``assert_no_memory_growth`` on every runnable fixture that keeps
memory per iteration (fixtures/runnable/), and on its twin, which does not. The fixtures, their
expected bytes per call and their twins: ``runnable_steps.LEAKS``."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runnable_steps import F32, LEAKS, RUNNABLE, Leak, leak_steps
from torchmemlint.testing import assert_no_memory_growth, memory_budget

torch = pytest.importorskip("torch")
# tml013's backward(create_graph=True) is the antipattern that torch warns about.
pytestmark = pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")


@pytest.mark.parametrize("leak", LEAKS, ids=lambda leak: leak.fixture)
def test_fails_on_the_leaking_fixture_with_its_bytes(leak: Leak) -> None:
    path = RUNNABLE / f"{leak.fixture}.py"
    step, _ = leak_steps(leak)
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
    _, step = leak_steps(leak)
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


def test_a_budget_whose_loop_never_ran_says_so() -> None:
    with pytest.raises(ValueError, match="0 call\\(s\\) ran: 2 warm-up and at least 2 measured calls are needed"):
        with memory_budget() as budget:
            for _ in []:
                budget.step()


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
