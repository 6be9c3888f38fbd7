"""How well the rules' findings survive semantics-preserving rewrites: for each rewrite of
tests/metamorphic/rewrites.py, over the rule fixtures it applies to, the share of invalid
fixtures still flagged with the same findings at the moved lines and of valid ones still silent.

    python bench/metamorphic_rates.py [--failures] [--markdown]

``--failures`` lists each failing (fixture, rewrite) pair with what went missing or appeared;
the list of pairs that tests/test_metamorphic.py expects to fail is
tests/metamorphic/known_failures.txt.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from metamorphic.cases import variants  # noqa: E402
from metamorphic.rewrites import REWRITES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true", help="list every failing pair")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    options = parser.parse_args()
    started = time.perf_counter()
    cases = variants()
    generated = time.perf_counter()
    counts: dict = defaultdict(lambda: [0, 0, 0, 0])  # invalid kept, invalid, valid kept, valid
    failures = []
    with tempfile.TemporaryDirectory() as directory:
        for variant in cases:
            expected, actual = variant.expected(), variant.findings(Path(directory))
            row = counts[variant.rewrite]
            offset = 0 if variant.invalid else 2
            row[offset + 1] += 1
            if actual == expected:
                row[offset] += 1
            else:
                failures.append((variant, sorted(expected - actual, key=str), sorted(actual - expected, key=str)))
    checked = time.perf_counter()
    rows = []
    totals = [0, 0, 0, 0]
    for rewrite in REWRITES:
        row = counts[rewrite.name]
        totals = [total + value for total, value in zip(totals, row)]
        rows.append((rewrite.name, *row))
    rows.append(("all", *totals))
    if options.markdown:
        print("| rewrite | invalid still flagged | valid still silent |")
        print("|---|---|---|")
        for name, kept, invalid, silent, valid in rows:
            print(f"| {name} | {_rate(kept, invalid)} | {_rate(silent, valid)} |")
    else:
        print(f"{'rewrite':<18} {'invalid still flagged':>24} {'valid still silent':>24}")
        for name, kept, invalid, silent, valid in rows:
            print(f"{name:<18} {_rate(kept, invalid):>24} {_rate(silent, valid):>24}")
    print(f"\n{len(cases)} rewritten fixtures ({generated - started:.1f} s to rewrite, "
          f"{checked - generated:.1f} s to check), {len(failures)} failing")
    if options.failures:
        for variant, missing, unexpected in failures:
            kind = "invalid" if variant.invalid else "valid"
            print(f"{variant.fixture} {variant.rewrite} [{kind}] missing={missing} unexpected={unexpected}")
    return 0


def _rate(kept: int, total: int) -> str:
    return f"{kept}/{total} ({100 * kept / total:.0f} %)" if total else "-"


if __name__ == "__main__":
    sys.exit(main())
