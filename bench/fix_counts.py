"""What ``fix --unsafe-fixes`` (every rule selected) does with each finding, per rule, on folders
of Python files: fixed by a safe fix, fixed by an unsafe one, gone because another rule's fix
removed its cause, or not fixed (with the rule's reason). Also per folder: files changed,
findings before and after, files a fix would break (never written), files a second ``fix``
would change again (not idempotent), and near-miss files (``neg_``, ``near_``) it changed.

Usage: python bench/fix_counts.py FOLDER [FOLDER ...] [--markdown]
(the numbers of docs/fix.md: fixtures/rules, fixtures/runnable, bench/corpus, bench/reports)."""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import ALL_RULES

# Files written to stay silent (bench/corpus's neg_, bench/reports's near_): fix must leave them alone.
NEAR_MISSES = ("neg_", "near_")
SAFE, UNSAFE, RESOLVED, NOT_FIXED = "fixed safe", "fixed unsafe", "resolved by another fix", "not fixed"


def measure(folder: Path, counts: dict[str, Counter], reasons: dict[str, Counter]) -> dict[str, int]:
    totals = Counter()
    for path in sorted(folder.rglob("*.py")):
        source = path.read_bytes()
        found, errors = check_source(source, str(path), ALL_RULES)
        if errors:
            continue
        totals["files"] += 1
        totals["before"] += len(found)
        result = fix_source(source, str(path), ALL_RULES, unsafe=True)
        if result.error:
            totals["broken"] += 1
            continue
        totals["after"] += len(result.remaining)
        totals["changed"] += result.source != source
        totals["near-miss changed"] += result.source != source and path.name.startswith(NEAR_MISSES)
        totals["not idempotent"] += fix_source(result.source, str(path), ALL_RULES, unsafe=True).source != result.source
        applied = {(d.line, d.column, d.code): d for d in result.applied}
        left = {(d.line, d.code) for d in result.unfixed}
        for diagnostic in found:
            done = applied.get((diagnostic.line, diagnostic.column, diagnostic.code))
            if done is not None:
                outcome = SAFE if done.fix.safe else UNSAFE
            elif (diagnostic.line, diagnostic.code) not in left:
                outcome = RESOLVED
            else:
                outcome = NOT_FIXED
                reasons[diagnostic.code][_reason(diagnostic)] += 1
            counts[diagnostic.code][outcome] += 1
    return totals


def _reason(diagnostic) -> str:
    if diagnostic.fix is not None:
        return "its fix overlapped another and did not apply"
    return diagnostic.no_fix.replace("no automatic fix: ", "", 1) or "the rule has no automatic fix"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--markdown", action="store_true", help="print tables for docs/fix.md")
    args = parser.parse_args()
    for folder in args.folders:
        counts: dict[str, Counter] = defaultdict(Counter)
        reasons: dict[str, Counter] = defaultdict(Counter)
        totals = measure(folder, counts, reasons)
        print(f"\n{folder}: {totals['files']} files, {totals['changed']} changed; findings {totals['before']} -> "
              f"{totals['after']}; {totals['broken']} broken, {totals['not idempotent']} not idempotent, "
              f"{totals['near-miss changed']} near-miss files changed")
        if args.markdown:
            print(f"\n| rule | findings | {SAFE} | {UNSAFE} | {RESOLVED} | {NOT_FIXED}: why |\n|---|---|---|---|---|---|")
        for code in sorted(counts):
            row = counts[code]
            why = "; ".join(f"{n} × {reason}" for reason, n in reasons[code].most_common())
            cells = [code, sum(row.values()), row[SAFE], row[UNSAFE], row[RESOLVED], f"{row[NOT_FIXED]}" +
                     (f" ({why})" if why else "")]
            print("| " + " | ".join(map(str, cells)) + " |" if args.markdown else "  ".join(map(str, cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
