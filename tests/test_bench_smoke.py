"""bench/run.py runs end to end and prints what it promises. Checks the format, never a timing."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH = REPO_ROOT / "bench" / "run.py"


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True,
                          timeout=300)


def write_two_files(folder: Path) -> list[str]:
    training = folder / "train.py"
    training.write_text("import torch\n\nfor x in loader:\n    total += model(x)\n")  # 4 lines
    helper = folder / "helper.py"
    helper.write_text("def scale(value, factor=2):\n    return value * factor")  # 2, no final \n
    return [str(training), str(helper)]


def test_ast_and_libcst_rows_and_json(tmp_path):
    report_path = tmp_path / "report.json"
    completed = run_bench(*write_two_files(tmp_path), "--repeat", "1", "--only", "ast,libcst",
                          "--json", str(report_path))

    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout
    assert "files: 2, lines: 6;" in output
    assert "SKIPPED" not in output and "FAILED" not in output
    for name in ("ast", "libcst"):
        # config, runs, CPU s, wall s, RSS MiB, lines/CPU-s, findings ("-": not a linter)
        row = rf"^{name} +1 +\d+\.\d\d +\d+\.\d\d +\d+ +[\d,]+ +-$"
        assert re.search(row, output, re.M), output
    assert "ast.parse + ast.walk: 2 files" in output
    assert "libcst.parse_module: 2 files, 0 failed" in output
    assert re.search(r"CPU LibCST parse / ast parse\+walk \(context\) +\d", output), output
    assert re.search(r"throughput torchmemlint -j 1 / TorchFix +n/a .*pending: tml-j1 not "
                     r"selected, torchfix not selected", output), output

    report = json.loads(report_path.read_text())
    assert report["files"]["count"] == 2 and report["files"]["lines"] == 6
    assert set(report["configs"]) == {"ast", "libcst"}
    for result in report["configs"].values():
        assert result["status"] == "ok"
        assert len(result["samples"]) == 1
        assert result["median"]["cpu_s"] > 0 and result["median"]["peak_rss_mib"] > 0
        assert result["lines_per_cpu_s"] > 0
    assert report["ratios"]["CPU LibCST parse / ast parse+walk (context)"]["value"] > 0


def test_a_file_that_does_not_parse_fails_the_configuration(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")

    completed = run_bench(str(broken), "--repeat", "1", "--only", "ast")

    assert completed.returncode == 1
    assert re.search(r"^ast +FAILED: exit status 1;", completed.stdout, re.M), completed.stdout
    assert "broken.py: SyntaxError" in completed.stdout


def test_unknown_configuration_is_a_clear_error(tmp_path):
    completed = run_bench(*write_two_files(tmp_path), "--only", "ast,ruff")

    assert completed.returncode != 0
    assert "unknown configuration(s) ruff" in completed.stderr
    assert "Traceback" not in completed.stderr
