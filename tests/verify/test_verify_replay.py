"""The replay machinery on small scripts: the cap, the timeout, the memory cap, the user's line
numbers, the child's environment. Findings are made by hand here (with a fix as text edits), so
that these tests do not depend on what the rules flag."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from torchmemlint.diagnostics import Diagnostic, Edit, Fix
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings

pytestmark = pytest.mark.slow
GiB = 2**30


def verify_one(server, tmp_path: Path, source: str, marker: str, replacement: Optional[str] = None,
               limits: Limits = Limits(device="cpu", timeout_s=60, memory_limit=GiB),
               script_args: tuple[str, ...] = (), twin_text: Optional[str] = None) -> VerifyResult:
    """Verify a finding on the line holding ``marker``; its fix replaces ``marker`` with
    ``replacement``; ``twin_text``: a hand-written twin instead."""
    source = textwrap.dedent(source)
    path = tmp_path / "script.py"
    path.write_text(source)
    line = next(number for number, text in enumerate(source.splitlines(), 1) if marker in text)
    column = source.splitlines()[line - 1].index(marker)
    fix = None
    if replacement is not None:
        fix = Fix("by hand", False, (Edit(line, column, line, column + len(marker), replacement),))
    finding = Diagnostic(str(path), line, column, "TML001", "kept", fix=fix)
    settings = Settings(limits=limits, script_args=script_args)
    [result] = verify_findings([FileFindings(str(path), source, [finding], twin_text)], settings, server=server)
    return result


def test_while_true_stops_at_the_cap(replay_server, tmp_path: Path) -> None:
    result = verify_one(replay_server, tmp_path, """\
        import torch
        w = torch.ones(4, requires_grad=True)
        kept = []
        while True:
            kept.append((w * torch.ones(4)).sum())
        """, "(w * torch.ones(4)).sum()", "(w * torch.ones(4)).sum().detach()")
    assert result.original.status == result.twin.status == "capped"
    assert result.original.iterations == 10
    assert result.verdict == "confirmed-growth"
    # the graph keeps the 4-float ``torch.ones(4)`` that ``mul`` saved for w's gradient; both
    # keep the 0-dim sum
    assert result.judgement.bytes_per_iteration == 4 * 4
    assert result.judgement.original_bytes_per_iteration == 4 * 4 + 4
    assert result.retained_by[0]["name"] == "kept"


def test_hang_before_the_loop_times_out(replay_server, tmp_path: Path) -> None:
    result = verify_one(replay_server, tmp_path, """\
        import time
        time.sleep(600)
        kept = []
        for step in range(10):
            kept.append(step)
        """, "kept.append(step)", "pass", limits=Limits(device="cpu", timeout_s=2))
    assert result.verdict == "inconclusive"
    assert "timed out after 2 s, before the loop was reached" in result.explanation
    assert result.twin is None  # nothing to compare with: the twin is not run


def test_hang_inside_the_loop_times_out(replay_server, tmp_path: Path) -> None:
    result = verify_one(replay_server, tmp_path, """\
        import time
        kept = []
        for step in range(100):
            if step == 3:
                time.sleep(600)
            kept.append(step)
        """, "kept.append(step)", "pass", limits=Limits(device="cpu", timeout_s=2))
    assert result.verdict == "inconclusive"
    assert "timed out after 2 s, after iteration 3" in result.explanation


def test_gigabytes_per_iteration_run_out_of_memory_under_the_cap(replay_server, tmp_path: Path) -> None:
    """Each iteration's graph keeps a 1 GiB matrix (saved by ``mv`` for the weight's gradient).
    It is never written, so it costs address space (what RLIMIT_AS caps) but no physical memory:
    the machine running the test is not at risk."""
    result = verify_one(replay_server, tmp_path, """\
        import torch
        weight = torch.nn.Parameter(torch.ones(4096))
        outputs = []
        for step in range(100):
            matrix = torch.empty(65536, 4096)
            outputs.append(torch.mv(matrix, weight))
        """, "torch.mv(matrix, weight)", "torch.mv(matrix, weight).detach()",
                        limits=Limits(device="cpu", timeout_s=120, memory_limit=int(2.5 * GiB)))
    assert result.original.status == "oom"
    assert result.twin.status == "capped"
    assert result.verdict == "confirmed-growth"
    assert result.judgement.bytes_per_iteration == 65536 * 4096 * 4
    assert "Ran out of memory at iteration 3" in result.explanation
    assert result.retained_by[0]["name"] == "outputs"


def test_except_exception_does_not_swallow_the_cap(replay_server, tmp_path: Path) -> None:
    result = verify_one(replay_server, tmp_path, """\
        import torch
        kept = []
        for step in range(1000):
            try:
                kept.append(torch.zeros(8))
            except Exception:
                pass
        """, "torch.zeros(8)", "0")
    assert result.original.status == "capped"
    assert result.verdict == "confirmed-growth"
    assert result.judgement.bytes_per_iteration == 8 * 4


def test_a_retry_loop_that_catches_the_stop_still_gives_the_measurements(replay_server, tmp_path: Path) -> None:
    result = verify_one(replay_server, tmp_path, """\
        import torch
        kept = []
        while True:
            try:
                for step in range(1000):
                    kept.append(torch.zeros(8))
            except BaseException:
                pass
        """, "torch.zeros(8)", "0", limits=Limits(device="cpu", timeout_s=3))
    assert result.original.status == result.twin.status == "capped"
    assert result.judgement.bytes_per_iteration == 8 * 4


def test_errors_point_at_the_users_line(replay_server, tmp_path: Path) -> None:
    result = verify_one(replay_server, tmp_path, """\
        kept = []
        for step in range(100):
            kept.append(step)
            if step == 4:
                raise ValueError("bad batch")
        """, "kept.append(step)", "pass")
    assert result.verdict == "inconclusive"
    assert "raised ValueError at line 5: bad batch" in result.explanation


def test_the_child_environment(replay_server, tmp_path: Path) -> None:
    report = tmp_path / "environment.json"
    result = verify_one(replay_server, tmp_path, """\
        import json, os, random, sys
        import torch
        environment = {
            "cwd": os.getcwd(), "argv": sys.argv, "name": __name__, "file": __file__,
            "seed": torch.initial_seed(), "random": random.random(),
            "variables": {k: os.environ.get(k) for k in ("TORCH_COMPILE_DISABLE", "WANDB_MODE", "HF_HUB_OFFLINE")},
        }
        with open(sys.argv[1], "w") as report:
            json.dump(environment, report)
        for step in range(3):
            x = torch.zeros(1)
        """, "x = torch.zeros(1)", script_args=(str(report),))
    environment = json.loads(report.read_text())
    # a copy of the script, in a copy of its folder that is also the working directory
    script = Path(environment["file"])
    assert script.name == "script.py" and script.parent == Path(environment["cwd"])
    assert "torchmemlint-verify-" in environment["cwd"] and not Path(environment["cwd"]).exists()
    assert environment["argv"] == [str(script), str(report)]
    assert environment["name"] == "__main__"
    assert environment["seed"] == 0
    import random
    random.seed(0)
    assert environment["random"] == random.random()
    assert environment["variables"] == {"TORCH_COMPILE_DISABLE": "1", "WANDB_MODE": "offline", "HF_HUB_OFFLINE": "1"}
    assert result.original.status == "finished" and result.original.iterations == 3


def test_a_hand_written_twin_stands_in_for_a_missing_fix(replay_server, tmp_path: Path) -> None:
    """A concatenation accumulator: the same live memory as the list of chunks, but each step
    copies the whole accumulator, which shows in the peak and in the bytes allocated."""
    original = """\
        import torch
        chunks = torch.empty(0, 256)
        for step in range(100):
            chunks = torch.cat([chunks, torch.ones(1, 256)])
        """
    twin = """\
        import torch
        chunks = []
        for step in range(100):
            chunks.append(torch.ones(1, 256))
        """
    result = verify_one(replay_server, tmp_path, original, "torch.cat", twin_text=textwrap.dedent(twin))
    assert result.twin_origin == "file"
    assert result.verdict == "confirmed-peak-excess"
    row = 256 * 4
    assert result.judgement.bytes_per_iteration == 0  # both keep one 256-float row per iteration
    # At iteration k's peak the original holds the old accumulator (k - 1 rows), the new row and
    # the new accumulator (k rows); the twin, its list of k rows: k rows more. It also allocated
    # the k-row accumulator. The window is iterations 3..10, whose median k is 6.5.
    assert result.judgement.peak_excess_bytes == int(6.5 * row)
    assert result.judgement.allocated_excess_bytes == int(6.5 * row)


def test_cuda_asked_for_where_there_is_none(replay_server, tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = verify_one(replay_server, tmp_path, """\
        kept = []
        for step in range(100):
            kept.append(step)
        """, "kept.append(step)", "pass", limits=Limits(device="cuda"))
    assert result.verdict == "inconclusive"
    assert "DeviceError: --device cuda, but torch.cuda.is_available() is False" in result.explanation
