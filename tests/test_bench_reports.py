"""The real-report set (bench/reports) is well-formed and stays disjoint from the rule fixtures.

Checks the data and the scoring's shape, never a recall figure: the rules are tuned against these
numbers elsewhere."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH = REPO_ROOT / "bench"
REPORTS = BENCH / "reports"


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True,
                          timeout=300)


def test_every_case_is_a_labelled_rewrite_of_a_public_report():
    cases = sorted(REPORTS.rglob("*.py"))
    assert len(cases) >= 60
    for case in cases:
        head = case.read_text(encoding="utf-8").splitlines()[:4]
        assert re.match(r"# Source: https?://\S+$", head[0]), case
        assert head[1].startswith("# Report: ") and head[2].startswith("# Shape: "), case
        assert head[3].startswith("# Expect: "), case
        assert case.name.startswith(("leak_", "near_")), case


def test_scoring_per_category_accepts_the_set():
    completed = run("evaluate.py", "--reports", "--details")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout
    categories = sorted(p.name for p in REPORTS.iterdir() if p.is_dir())
    for category in categories:
        # every category has leaks and near-misses, shown as found/total and flagged/total
        assert re.search(rf"^{category} +\d+/[1-9]\d* \(\d+%\) +\d+/[1-9]\d* +\d+/[1-9]\d* \(\d+%\)", output, re.M), output
    assert re.search(r"^TOTAL +\d+/\d+", output, re.M)
    assert "missed leaks (primary rule not reported on its line):" in output


def test_scoring_refuses_a_header_that_disagrees_with_its_labels(tmp_path):
    from importlib import util

    spec = util.spec_from_file_location("bench_evaluate", BENCH / "evaluate.py")
    evaluate = util.module_from_spec(spec)
    sys.modules["bench_evaluate"] = evaluate  # dataclasses look their module up
    sys.path.insert(0, str(BENCH))  # evaluate.py imports its sibling lint.py
    try:
        spec.loader.exec_module(evaluate)
    finally:
        sys.path.remove(str(BENCH))
        del sys.modules["bench_evaluate"]
    text = "# Source: https://example.org/1\n# Report: r\n# Shape: s\n# Expect: TML001 line 6\nx = 1\ny = 2  # expect: TML001\n"
    case = evaluate.LabelledFile(tmp_path / "leak_x.py", text.splitlines(), {(6, "TML001")}, set(), None)
    assert evaluate.header_labels(case) == [("TML001", [6])]
    wrong = evaluate.LabelledFile(tmp_path / "leak_x.py", text.replace("line 6", "line 5").splitlines(),
                                  {(6, "TML001")}, set(), None)
    try:
        evaluate.header_labels(wrong)
    except ValueError as problem:
        assert "disagree" in str(problem)
    else:
        raise AssertionError("a header naming another line than its label was accepted")


def test_bench_cases_do_not_repeat_fixture_loops():
    completed = run("overlap.py")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.strip().endswith("0 overlapping loop(s)")
