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

``--reports`` scores the real-report set instead (bench/reports: rewrites of public leak reports,
kept apart from bench/corpus and from the rule fixtures), file by file and per category:

  leaks        files named ``leak_*.py``; found when the rule named first in their ``# Expect:``
               header reports one of the lines it names (every rule selected, off-by-default ones
               included); "all labels" when every ``# expect:`` label of the file is reported
  near-misses  files named ``near_*.py``, which must stay silent; flagged when a default rule
               (or, in the last column, any rule) reports anything in them

Usage: python bench/evaluate.py --reports [--details]
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

from lint import REPO_ROOT, all_rules, expected_diagnostics, lint, python_files, rule_of_directory

CORPUS = REPO_ROOT / "bench" / "corpus"
REPORTS = REPO_ROOT / "bench" / "reports"
NEAR_MISS_HEADER = "# Expect: near-miss: must be silent"
HEADER_LABEL = re.compile(r"(?P<code>TML\d{3}) lines? (?P<lines>\d+(?:, \d+)*)")


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


@dataclass
class ReportCase:
    """One file of the real-report set, with what it expects and what the rules reported."""

    file: LabelledFile
    category: str
    header_labels: list[tuple[str, list[int]]]  # ``# Expect:`` header, the primary rule first

    @property
    def is_leak(self) -> bool:
        return self.file.path.name.startswith("leak_")

    @property
    def found(self) -> bool:
        # (``TML004 line 55; TML004 line 59``: every line the header gives the primary rule)
        code = self.header_labels[0][0]
        lines = {line for labelled, at in self.header_labels if labelled == code for line in at}
        return bool(self.file.reports(code) & lines)

    @property
    def all_labels_found(self) -> bool:
        return self.file.expected <= self.file.actual

    def flagged(self, codes: set[str]) -> bool:
        return any(code in codes for _, code in self.file.actual)


def header_labels(file: LabelledFile) -> list[tuple[str, list[int]]]:
    """The ``# Expect:`` header of a report case, checked against its inline ``# expect:`` labels.

    Raises ValueError when the file is not a well-formed case: no header or source, a leak whose
    header and inline labels disagree, a near-miss that carries labels, or an unknown file name."""
    header = [line for line in file.lines[:8] if line.startswith("# Expect:")]
    if len(header) != 1 or not file.lines or not file.lines[0].startswith("# Source: "):
        raise ValueError("needs a '# Source: URL' first line and one '# Expect:' header line")
    if file.path.name.startswith("near_"):
        if header[0] != NEAR_MISS_HEADER or file.expected:
            raise ValueError(f"a near-miss carries no labels and the header {NEAR_MISS_HEADER!r}")
        return []
    if not file.path.name.startswith("leak_"):
        raise ValueError("report cases are named leak_*.py or near_*.py")
    labels = [(m.group("code"), [int(n) for n in m.group("lines").split(", ")])
              for m in HEADER_LABEL.finditer(header[0])]
    if not labels or {(line, code) for code, lines in labels for line in lines} != file.expected:
        raise ValueError("the '# Expect:' header and the inline '# expect:' labels disagree")
    return labels


def report_cases(files: list[LabelledFile]) -> list[ReportCase]:
    cases, problems = [], []
    for f in files:
        try:
            cases.append(ReportCase(f, f.path.parent.name, header_labels(f)))
        except ValueError as problem:
            problems.append(f"{f.path.relative_to(REPO_ROOT)}: {problem}")
    if problems:
        raise SystemExit("malformed report cases:\n  " + "\n  ".join(problems))
    return cases


def print_report_table(cases: list[ReportCase], default_codes: set[str], all_codes: set[str]) -> None:
    header = f"{'category':22} {'leaks found':>12} {'all labels':>11} {'near-misses flagged':>20} {'(any rule)':>11}"
    print(header)
    print("-" * len(header))
    categories = sorted({c.category for c in cases}) + ["TOTAL"]
    for category in categories:
        chosen = [c for c in cases if category in ("TOTAL", c.category)]
        leaks = [c for c in chosen if c.is_leak]
        near = [c for c in chosen if not c.is_leak]
        if category == "TOTAL":
            print("-" * len(header))
        print(f"{category:22} {_ratio(sum(c.found for c in leaks), len(leaks)):>12} "
              f"{sum(c.all_labels_found for c in leaks):>5}/{len(leaks):<5} "
              f"{_ratio(sum(c.flagged(default_codes) for c in near), len(near)):>20} "
              f"{sum(c.flagged(all_codes) for c in near):>5}/{len(near):<5}")


def print_report_details(cases: list[ReportCase], default_codes: set[str]) -> None:
    def where(case: ReportCase) -> str:
        return str(case.file.path.relative_to(REPO_ROOT))

    def reported(case: ReportCase) -> str:
        found = sorted(case.file.actual, key=lambda pair: (pair[1], pair[0]))
        return ", ".join(f"{code}@{line}" for line, code in found) or "nothing"

    print("\nmissed leaks (primary rule not reported on its line):")
    for case in cases:
        if case.is_leak and not case.found:
            code, lines = case.header_labels[0]
            source = case.file.lines[lines[0] - 1].split("# expect:")[0].strip()
            print(f"  {where(case)}:{lines[0]}: {code} expected on `{source}`; reported: {reported(case)}")
    print("\nleaks found, other labels missed:")
    for case in cases:
        if case.is_leak and case.found and not case.all_labels_found:
            missing = sorted(case.file.expected - case.file.actual)
            print(f"  {where(case)}: missing {', '.join(f'{c}@{n}' for n, c in missing)}; reported: {reported(case)}")
    print("\nflagged near-misses:")
    for case in cases:
        if not case.is_leak and case.file.actual:
            marker = "" if case.flagged(default_codes) else " (off-by-default rules only)"
            print(f"  {where(case)}: {reported(case)}{marker}")


def evaluate_reports(details: bool) -> int:
    rules = all_rules()
    files, errors = load([REPORTS], rules)
    cases = report_cases(files)
    default_codes = {rule.code for rule in rules if rule.default_enabled}
    leaks = sum(c.is_leak for c in cases)
    print(f"report cases: {len(cases)} ({leaks} leaks, {len(cases) - leaks} near-misses) from {REPORTS}")
    print_report_table(cases, default_codes, {rule.code for rule in rules})
    for error in errors:
        print(f"file error: {error.path}:{error.line}: {error.message}")
    if details:
        print_report_details(cases, default_codes)
    return 1 if errors else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extra", nargs="*", type=Path, help="more folders of labelled files")
    parser.add_argument("--details", action="store_true", help="list every missed label and false alarm")
    parser.add_argument("--reports", action="store_true",
                        help="score the real-report set (bench/reports) per category instead")
    args = parser.parse_args()
    if args.reports:
        if args.extra:
            parser.error("--reports scores bench/reports alone")
        return evaluate_reports(args.details)
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
