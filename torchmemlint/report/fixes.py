"""What ``torchmemlint fix`` says about the fixes: the summary line and ``--show-fixes``."""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from torchmemlint.report.text import plural

if TYPE_CHECKING:
    from torchmemlint.api import FileFix


class FixTally:
    """Counts over the fixed files: applied fixes per file and code, what remains (findings and
    file errors), and how much of that ``--unsafe-fixes`` would fix."""

    def __init__(self) -> None:
        self.files = 0
        self.changed_files = 0
        self.applied_by_file: dict[str, Counter[str]] = {}
        self.names: dict[str, str] = {}
        self.remaining = 0
        self.errors = 0
        self.unsafe_fixable = 0

    def add(self, outcome: "FileFix") -> None:
        self.files += 1
        self.changed_files += outcome.changed
        if outcome.applied:
            self.applied_by_file[outcome.path] = Counter(d.code for d in outcome.applied)
            self.names.update((d.code, d.name) for d in outcome.applied)
        self.remaining += len(outcome.remaining.findings)
        self.errors += len(outcome.remaining.errors)
        self.unsafe_fixable += sum(1 for d in outcome.remaining.diagnostics if d.fix and not d.fix.safe)

    @property
    def applied(self) -> int:
        return sum(sum(counts.values()) for counts in self.applied_by_file.values())


def format_fix_summary(tally: FixTally, diff: bool, unsafe: bool) -> str:
    """``Fixed 3 errors in 2 files; 1 remaining (1 fixable with --unsafe-fixes).`` (``Would fix``
    with ``--diff``)."""
    verb = "Would fix" if diff else "Fixed"
    line = f"{verb} {plural(tally.applied, 'error')} in {plural(tally.changed_files, 'file')}; " \
           f"{tally.remaining} remaining"
    if tally.unsafe_fixable and not unsafe:
        line += f" ({tally.unsafe_fixable} fixable with --unsafe-fixes)"
    return line + "."


def format_applied_fixes(tally: FixTally, diff: bool) -> str:
    """``--show-fixes``: per file, how many fixes of each code were applied."""
    if not tally.applied:
        return "No errors would be fixed." if diff else "No errors fixed."
    lines = [f"{'Would fix' if diff else 'Fixed'} {plural(tally.applied, 'error')}:"]
    for path, counts in tally.applied_by_file.items():
        lines.append(f"- {path}:")
        lines.extend(f"    {count} × {code} ({tally.names[code]})" for code, count in sorted(counts.items()))
    return "\n".join(lines)
