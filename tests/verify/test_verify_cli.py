"""``torchmemlint verify`` through the real command line, and the promise that nothing but the
replay children imports torch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "fixtures" / "runnable" / "tml001_train_keeps_mse_loss.py"
JSON_KEYS = {
    "path", "line", "column", "code", "name", "message", "verdict", "bytes_per_iteration", "peak_excess_bytes",
    "projected_bytes", "projected_iterations", "original_bytes_per_iteration", "twin_bytes_per_iteration",
    "heap_bytes_per_iteration", "growth_meter", "allocated_excess_bytes", "iterations", "measured_iterations",
    "meter", "device",
    "explanation", "scope", "fix", "original", "twin", "retained_bytes_per_iteration", "retained_by",
    "created_at", "live_storage", "twin_origin", "twin_path", "live_excess_bytes",
    "inconclusive_reason", "memory", "nodes_per_iteration", "saved_tensors_per_iteration", "native_bytes_per_iteration",
    "one_time_bytes", "ms_per_iteration", "twin_ms_per_iteration", "grad_norm", "twin_grad_norm", "fix_error",
    "alone_verdict", "workers", "allocation_sites",
}


# A script with one finding that leaves a mark (the file named by its first argument) when it runs.
MARKING_SCRIPT = (
    "import sys\n"
    "import torch\n"
    "open(sys.argv[1], 'w').write('ran')\n"
    "model = torch.nn.Linear(4, 2)\n"
    "loader = [torch.ones(1, 4)] * 3\n"
    "outputs = []\n"
    "for x in loader:\n"
    "    outputs.append(model(x))\n")


def run_cli(*arguments: str, cwd: Path = ROOT, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "torchmemlint", *arguments], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **(env or {})})


def run_cli_on_a_terminal(answer: str, *arguments: str) -> subprocess.CompletedProcess:
    """The command line with stdin on a pseudo-terminal, answering ``answer`` when asked."""
    terminal, stdin = os.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "torchmemlint", *arguments], cwd=ROOT, stdin=stdin,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        os.write(terminal, answer.encode() + b"\n")
        stdout, stderr = process.communicate(timeout=600)
    finally:
        os.close(terminal)
        os.close(stdin)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_importing_the_verifier_does_not_import_torch() -> None:
    code = ("import sys, torchmemlint.cli, torchmemlint.verify, torchmemlint.verify.output, "
            "torchmemlint.verify.plot; sys.exit('torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0


@pytest.mark.slow
def test_verify_json_and_plot(tmp_path: Path) -> None:
    plot = tmp_path / "memory.png"
    completed = run_cli("verify", str(FIXTURE), "--device", "cpu", "--iterations", "3", "--format", "json",
                        "--plot", str(plot), "--yes")
    assert completed.returncode == 1, completed.stderr  # confirmed
    [finding] = json.loads(completed.stdout)
    assert set(finding) == JSON_KEYS
    # the storages grow alike (the kept loss views its B x 10 buffer, with the fix too); the graph does not
    assert (finding["line"], finding["code"], finding["verdict"]) == (21, "TML001", "confirmed-growth")
    assert (finding["growth_meter"], finding["memory"], finding["nodes_per_iteration"]) == ("graph", "host", 6)
    assert (finding["meter"], finding["device"], finding["iterations"]) == ("live-storage", "cpu", 3)
    assert finding["original_bytes_per_iteration"] == finding["twin_bytes_per_iteration"] == 4 * 16 * 10
    assert "[1/1]" in completed.stderr  # progress
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_verify_passes_arguments_after_the_separator_to_the_script(tmp_path: Path) -> None:
    source = (
        "import sys\n"
        "import torch\n"
        "model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))\n"
        "loader = [torch.ones(1, 4)] * int(sys.argv[1])\n"
        "outputs = []\n"
        "for x in loader:\n"
        "    outputs.append(model(x))\n")
    script, fixed = tmp_path / "train.py", tmp_path / "fixed" / "train.py"
    script.write_text(source)
    fixed.parent.mkdir()
    fixed.write_text(source.replace("model(x)", "model(x).detach()"))  # (the finding has no fix of its own)
    completed = run_cli("verify", str(script), "--device", "cpu", "--format", "json", "--twin", str(fixed),
                        "--", "6", env={"TORCHMEMLINT_VERIFY_YES": "1"})  # consent given in advance, the other way
    [finding] = json.loads(completed.stdout)
    # 6 iterations, as the script was told: the loop ends before the cap (2 warm-up + 8)
    assert (finding["original"]["status"], finding["original"]["iterations"]) == ("finished", 6)
    assert finding["measured_iterations"] == [3, 4, 5, 6]
    assert finding["verdict"] == "confirmed-growth"
    # the saved ReLU output and the output itself (whether a fix's twin, which keeps the output,
    # or the original alone confirms it)
    assert finding["original_bytes_per_iteration"] == 4 * 8 + 4 * 2
    assert completed.returncode == 1


def test_a_hand_written_twin_is_for_one_script() -> None:
    completed = run_cli("verify", str(FIXTURE.parent), "--twin", str(FIXTURE))
    assert completed.returncode == 2
    assert "--twin is a fixed copy of one script" in completed.stderr


def test_bad_sizes_are_usage_errors() -> None:
    completed = run_cli("verify", str(FIXTURE), "--memory-limit", "lots")
    assert completed.returncode == 2
    assert "not a size: 'lots'" in completed.stderr


def test_verify_says_what_will_run_and_does_not_run_it_unasked(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(MARKING_SCRIPT)
    mark = tmp_path / "ran.txt"
    completed = run_cli("verify", str(script), "--device", "cpu", "--", str(mark))  # stdin: not a terminal
    assert completed.returncode == 2
    assert f"python {script} {mark}   (1 finding)" in completed.stderr
    assert f"in a temporary copy of {tmp_path} (1 file, " in completed.stderr
    assert completed.stderr.rstrip().endswith(
        "stdin is not a terminal to ask: pass --yes (or set TORCHMEMLINT_VERIFY_YES=1) to run it")
    assert not mark.exists()


def test_verify_runs_nothing_when_the_user_declines(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(MARKING_SCRIPT)
    mark = tmp_path / "ran.txt"
    completed = run_cli_on_a_terminal("n", "verify", str(script), "--device", "cpu", "--", str(mark))
    assert completed.returncode == 2
    assert "Run it? [y/N] torchmemlint: error: nothing was run (not confirmed)" in completed.stderr
    assert not mark.exists()


@pytest.mark.slow
def test_verify_runs_when_the_user_agrees(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(MARKING_SCRIPT)
    mark = tmp_path / "ran.txt"
    completed = run_cli_on_a_terminal("y", "verify", str(script), "--device", "cpu", "--iterations", "1",
                                      "--warmup", "0", "--", str(mark))
    assert "Run it? [y/N] " in completed.stderr
    assert mark.read_text() == "ran"
    assert "[1/1]" in completed.stderr


@pytest.mark.slow
def test_verify_replays_a_notebook_as_its_code_cells(tmp_path: Path) -> None:
    """The fixture split into cells, with IPython syntax and a markdown cell: the same finding
    is replayed with the same measurement (positions count the code cells' lines in order)."""
    lines = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    loop = next(index for index, line in enumerate(lines) if line.startswith("for "))

    def cell(kind: str, source: list) -> dict:
        extra = {"outputs": [], "execution_count": None} if kind == "code" else {}
        return {"cell_type": kind, "metadata": {}, "source": source, **extra}
    notebook = {"cells": [cell("code", ["%matplotlib inline\n", *lines[:loop]]), cell("markdown", ["# Training\n"]),
                          cell("code", ["!nvidia-smi\n", *lines[loop:]])],
                "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    completed = run_cli("verify", str(path), "--yes", "--device", "cpu", "--iterations", "3", "--format", "json")
    assert completed.returncode in (0, 1), completed.stderr
    [finding] = json.loads(completed.stdout)
    assert (finding["line"], finding["code"]) == (23, "TML001")  # 21 in the script, + 2 magic lines
    # Replayed, original and twin (the verdict itself is test_verify_json_and_plot's business).
    assert finding["iterations"] == 3 and finding["original"]["iterations"] == 2 + 3  # warm-up + measured
    assert finding["twin"]["iterations"] == 2 + 3 and finding["twin_origin"] == "fix"
