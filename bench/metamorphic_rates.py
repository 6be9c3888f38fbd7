"""How well the rules' findings survive semantics-preserving rewrites: for each rewrite of
tests/metamorphic/rewrites.py, over the rule fixtures it applies to, the share of invalid
fixtures still flagged with the same findings at the moved lines and of valid ones still silent.

    python bench/metamorphic_rates.py [--failures] [--markdown] [--write-known-failures]

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

from metamorphic.cases import KNOWN_FAILURES, variants  # noqa: E402
from metamorphic.rewrites import REWRITES  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true", help="list every failing pair")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--write-known-failures", action="store_true",
                        help=f"rewrite {KNOWN_FAILURES.name} from this run's failures, grouped by likely cause")
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
    if options.write_known_failures:
        write_known_failures(failures)
    return 0


# The likely cause of a failing pair, told by its rewrite and by whether findings went missing,
# appeared, or both (moved); the headings of known_failures.txt.
CAUSES = {
    "scope": "not a gap: moving a step's body into a function changes what TML006's peak finding is about "
             "(the step's locals, and the retained graph, die when the function returns), so the finding rightly goes",
    "alias": "a rule reads a class by its spelled name, not the import it resolves to "
             "(TML017: `from transformers import AutoModelForSequenceClassification as AMFSC`)",
    "names": "a rule recognises a value by its variable's name (optimizer, scaler, loss, ...), "
             "not by what it was built from",
    "while_missing": "a loop is recognised only as a `for` statement: `while True` over `next(iterator)` of "
                     "the same iterable (a loader, parameters(), named_modules()) is not followed",
    "while_unbounded": "a bounded `for` (range(4), a literal tuple) written as `while` over `next(iterator)` "
                       "loses its bound and is flagged as unbounded",
    "helper_missing": "the loop body moved into a helper (a function, or a method on `self` state): the rule "
                      "does not follow the per-iteration call into the helper, nor the caller's context "
                      "(eval(), the optimizer, the loop) into it",
    "helper_false": "the helper is checked without its caller's context (no_grad or eval() around the call, "
                    "a container bounded or reset by the caller): a false alarm in the helper",
    "moved": "the finding moves to the call site under another code (e.g. TML005 on "
             "`total = loop_body(..., total)`) instead of staying on the flagged statement in the helper",
    "return_missing": "a value computed in a helper and returned in a tuple or dict is not followed back into "
                      "the caller (an input that requires grad, a graph-carrying loss, a tensor saved on ctx)",
    "return_false": "what a helper builds loses its known kind on the way back through a tuple or dict "
                    "(a deque with maxlen, a detached value, a module): a false alarm in the caller",
    "output_missing": "a value read back from an output object's attribute (`loss_output.loss`) is not followed",
    "output_false": "a value read back from an output object's attribute loses its kind "
                    "(a detached tensor taken for something else): a false alarm",
}


def cause(fixture: str, rewrite: str, missing: list, unexpected: list) -> str:
    if rewrite in ("extract_loop_body", "extract_method") and fixture.startswith("TML006/invalid_retained_peak_") \
            and not unexpected:
        return "scope"
    if rewrite == "alias_imports":
        return "alias"
    if rewrite == "rename_locals":
        return "names"
    if rewrite == "for_to_while":
        return "while_unbounded" if unexpected and not missing else "while_missing"
    if missing and unexpected:
        return "moved"
    if rewrite in ("extract_loop_body", "extract_method"):
        return "helper_missing" if missing else "helper_false"
    if rewrite in ("return_tuple", "return_dict"):
        return "return_missing" if missing else "return_false"
    if rewrite == "wrap_output":
        return "output_missing" if missing else "output_false"
    return "unexplained"  # a rewrite with no known failures yet (notebook, decorator, inlining)


def write_known_failures(failures: list) -> None:
    groups = defaultdict(list)
    for variant, missing, unexpected in failures:
        groups[cause(variant.fixture, variant.rewrite, missing, unexpected)].append(f"{variant.fixture} {variant.rewrite}")
    lines = [
        "# Metamorphic pairs (fixture under fixtures/rules, rewrite of tests/metamorphic/rewrites.py) that",
        "# fail today because a rule does not follow the rewritten shape: tests/test_metamorphic.py expects",
        "# each to fail (strict xfail), so a rule that starts handling one makes the test fail until its",
        "# line is removed here. Grouped under `## cause` headings by the likely reason. Written by",
        "# `python bench/metamorphic_rates.py --write-known-failures` (review the diff: a new line is a",
        "# regression unless a new fixture or rewrite brought it).",
        "",
    ]
    for key, text in [*CAUSES.items(), ("unexplained", "not yet explained")]:
        if groups[key]:
            lines += [f"## {text}", *sorted(groups[key]), ""]
    KNOWN_FAILURES.write_text("\n".join(lines), encoding="utf-8")


def _rate(kept: int, total: int) -> str:
    return f"{kept}/{total} ({100 * kept / total:.0f} %)" if total else "-"


if __name__ == "__main__":
    sys.exit(main())
