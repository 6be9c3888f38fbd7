"""The pytest plugin, loaded by a real ``pytest`` through the installed ``pytest11`` entry point,
on a small test file: a leaking and a clean step, each with the marker and with the fixture."""
from __future__ import annotations

import sys

import pytest

from support import run, write

pytest.importorskip("torch")

# A Linear(8, 4) on batches of 2: a kept output is 2 x 4 floats, and its graph saves the 2 x 8
# input: 96 B per call.
USER_TESTS = """\
import pytest
import torch

model = torch.nn.Linear(8, 4)
kept = []


@pytest.mark.no_memory_growth(iterations=4)
def test_marked_step_that_keeps_outputs():
    kept.append(model(torch.randn(2, 8)))


@pytest.mark.no_memory_growth(iterations=4)
def test_marked_step_that_keeps_numbers():
    kept.append(model(torch.randn(2, 8)).sum().item())


def test_fixture_on_a_step_that_keeps_outputs(memory_growth):
    outputs = []
    memory_growth(lambda: outputs.append(model(torch.randn(2, 8))), iterations=4)


def test_fixture_on_a_training_step(memory_growth):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step():
        optimizer.zero_grad()
        model(torch.randn(2, 8)).pow(2).mean().backward()
        optimizer.step()

    memory_growth(train_step)
"""

NO_TORCH_TESTS = """\
import pytest


@pytest.mark.no_memory_growth
def test_marked():
    pass


def test_fixture(memory_growth):
    pass
"""
# What an environment without PyTorch looks like to `import torch`.
HIDE_TORCH = "import sys\nsys.modules['torch'] = None\n"


def pytest_run(tmp_path, env, *args):
    return run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rfs", *args], tmp_path, env)


def test_marker_and_fixture_fail_on_growth_and_pass_without(tmp_path, installed_env) -> None:
    write(tmp_path, "test_steps.py", USER_TESTS)
    result = pytest_run(tmp_path, installed_env, "test_steps.py")
    output = result.stdout
    assert result.returncode == 1, output + result.stderr
    lines = {line.lstrip("E").strip() for line in output.splitlines()}  # without pytest's "E" margin
    assert "2 failed, 2 passed" in output
    assert "FAILED test_steps.py::test_marked_step_that_keeps_outputs" in output
    assert "FAILED test_steps.py::test_fixture_on_a_step_that_keeps_outputs" in output
    assert "memory grows over 4 measured calls of test_marked_step_that_keeps_outputs()" in output
    assert "cpu: +96 B per call (live-storage meter" in output
    # each kept output's AddmmBackward0 and TBackward0 (the weight's transpose)
    assert "autograd graph: +2 nodes kept alive per call" in output
    # where: the names that keep the outputs, and the line that made them
    assert "kept: 6 storages, 288 B (e.g. kept[2])" in lines
    assert "outputs: 6 storages, 288 B (e.g. outputs[2])" in lines
    # the failure points at the test's own line, not at the plugin's
    assert "torchmemlint/pytest_plugin.py" not in output and "torchmemlint/testing.py" not in output
    assert "test_steps.py:10 in test_marked_step_that_keeps_outputs: kept.append(model(torch.randn(2, 8)))" in output
    assert "test_steps.py:20 in <lambda>: memory_growth(lambda: outputs.append(model(torch.randn(2, 8)))" in output


def test_marker_with_an_unknown_option_is_a_usage_error(tmp_path, installed_env) -> None:
    write(tmp_path, "test_typo.py", "import pytest\n\n\n@pytest.mark.no_memory_growth(iteration=4)\n"
                                    "def test_step():\n    pass\n")
    result = pytest_run(tmp_path, installed_env, "test_typo.py")
    assert result.returncode != 0
    assert "takes the keyword arguments device, iterations, tolerance_bytes, warmup, not iteration" in (
        result.stdout + result.stderr)


def test_without_torch_both_skip_with_a_message(tmp_path, installed_env) -> None:
    write(tmp_path, "conftest.py", HIDE_TORCH)
    write(tmp_path, "test_no_torch.py", NO_TORCH_TESTS)
    result = pytest_run(tmp_path, installed_env, "test_no_torch.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 skipped" in result.stdout
    assert result.stdout.count("torchmemlint memory tests need PyTorch, which is not installed") == 2
