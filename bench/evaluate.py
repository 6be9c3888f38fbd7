"""Labelled evaluation of every rule: recall and false-positive rate on bench/corpus (files modelled
on public bug reports) plus any extra folders of labelled files (e.g. ``fixtures``).

A label is a trailing ``# expect: TML001`` on the line a rule must report; every other (line, code)
must stay silent. Per rule it prints:

  labels      expected (line, code) pairs;  TP found on exactly that line;  FN missed
  recall      TP / labels
  FP lines    findings of the rule on lines that do not expect it
  FP files    files that expect nothing of the rule but get a finding of it, over all such files
  near-miss   the same, restricted to the rule's own folder (its ``neg_`` files: fixed versions and
              near-misses written to stay silent)

Usage: python bench/evaluate.py [EXTRA_DIR ...] [--details]
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from lint import REPO_ROOT, all_rules, expected_diagnostics, lint, python_files, rule_of_directory

CORPUS = REPO_ROOT / "bench" / "corpus"


@dataclass
class LabelledFile:
    path: Path
    lines: list[str]
    expected: set[tuple[int, str]]
    actual: set[tuple[int, str]]
    rule_folder: str | None

    def expects(self, code: str) -> set[int]:
        return {line for line, c in self.expected if c == code}

    def reports(self, code: str) -> set[int]:
        return {line for line, c in self.actual if c == code}


@dataclass
class RuleScore:
    positive_files: int = 0
    labels: int = 0
    true_positives: int = 0
    false_positive_lines: int = 0
    negative_files: int = 0
    negative_files_flagged: int = 0
    near_miss_files: int = 0
    near_miss_files_flagged: int = 0
    misses: list[tuple[Path, int]] = field(default_factory=list)
    false_alarms: list[tuple[Path, int]] = field(default_factory=list)

    @property
    def false_negatives(self) -> int:
        return self.labels - self.true_positives

    @property
    def recall(self) -> float | None:
        return self.true_positives / self.labels if self.labels else None


def score(files: list[LabelledFile], code: str) -> RuleScore:
    result = RuleScore()
    for f in files:
        expected, reported = f.expects(code), f.reports(code)
        result.labels += len(expected)
        result.true_positives += len(expected & reported)
        result.misses += [(f.path, line) for line in sorted(expected - reported)]
        result.false_alarms += [(f.path, line) for line in sorted(reported - expected)]
        result.false_positive_lines += len(reported - expected)
        if expected:
            result.positive_files += 1
            continue
        result.negative_files += 1
        result.negative_files_flagged += bool(reported)
        if f.rule_folder == code:
            result.near_miss_files += 1
            result.near_miss_files_flagged += bool(reported)
    return result


def load(roots: list[Path], rules) -> tuple[list[LabelledFile], list]:
    files, errors = [], []
    for root in roots:
        for path in python_files(root):
            source = path.read_bytes()
            diagnostics, file_errors = lint(source, path, rules)
            errors += file_errors
            text = source.decode("utf-8", errors="replace")
            files.append(LabelledFile(
                path=path,
                lines=text.splitlines(),
                expected=expected_diagnostics(text),
                actual={(d.line, d.code) for d in diagnostics},
                rule_folder=rule_of_directory(path),
            ))
    return files, errors


def _ratio(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "-"


def print_table(scores: dict[str, RuleScore], implemented: set[str]) -> None:
    header = f"{'rule':7} {'pos files':>9} {'labels':>6} {'TP':>4} {'FN':>4} {'recall':>7} " \
             f"{'FP lines':>8} {'FP files / neg files':>21} {'near-miss FP':>14}"
    print(header)
    print("-" * len(header))
    for code, s in scores.items():
        if code not in implemented:
            print(f"{code:7} {s.positive_files:>9} {s.labels:>6}   (rule not implemented)")
            continue
        recall = f"{s.recall:.0%}" if s.recall is not None else "-"
        print(f"{code:7} {s.positive_files:>9} {s.labels:>6} {s.true_positives:>4} {s.false_negatives:>4} "
              f"{recall:>7} {s.false_positive_lines:>8} "
              f"{_ratio(s.negative_files_flagged, s.negative_files):>21} "
              f"{_ratio(s.near_miss_files_flagged, s.near_miss_files):>14}")
    measured = [s for code, s in scores.items() if code in implemented]
    labels = sum(s.labels for s in measured)
    tp = sum(s.true_positives for s in measured)
    fp = sum(s.false_positive_lines for s in measured)
    print("-" * len(header))
    print(f"implemented rules: {len(measured)}; labels {labels}, TP {tp}, FN {labels - tp}, "
          f"recall {_ratio(tp, labels)}, FP lines {fp}, precision {_ratio(tp, tp + fp)}")


def print_details(scores: dict[str, RuleScore], files: list[LabelledFile], implemented: set[str]) -> None:
    text_of = {f.path: f.lines for f in files}

    def show(kind: str, code: str, path: Path, line: int) -> None:
        source = text_of[path][line - 1].strip() if line <= len(text_of[path]) else ""
        print(f"  {kind} {code} {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}:{line}: {source}")

    for code, s in scores.items():
        if code not in implemented or not (s.misses or s.false_alarms):
            continue
        print(f"\n{code}")
        for path, line in s.misses:
            show("FN", code, path, line)
        for path, line in s.false_alarms:
            show("FP", code, path, line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extra", nargs="*", type=Path, help="more folders of labelled files")
    parser.add_argument("--details", action="store_true", help="list every missed label and false alarm")
    args = parser.parse_args()
    roots = [CORPUS, *args.extra]
    missing = [str(r) for r in roots if not r.exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")

    rules = all_rules()
    implemented = {rule.code for rule in rules}
    files, errors = load(roots, rules)
    codes = sorted({c for f in files for _, c in f.expected} | implemented
                   | {f.rule_folder for f in files if f.rule_folder})
    scores = {code: score(files, code) for code in codes}

    print(f"labelled files: {len(files)} from {', '.join(str(r) for r in roots)}")
    print_table(scores, implemented)
    for error in errors:
        print(f"file error: {error.path}:{error.line}: {error.message}")
    if args.details:
        print_details(scores, files, implemented)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
