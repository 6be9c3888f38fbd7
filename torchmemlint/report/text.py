"""``path:line:col: TML001 message``, one line per finding, columns 1-based: the same lines
``flake8 --select=TML`` prints (in a notebook ``path:cell N:line:col: ...``, as ruff writes it)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

from torchmemlint.diagnostics import Diagnostic, FileError
from torchmemlint.report.base import Reporter, Tally

if TYPE_CHECKING:
    from torchmemlint.api import FileResult


def format_line(finding: Union[Diagnostic, FileError]) -> str:
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""  # as ruff writes notebook positions
    return f"{finding.path}:{cell}{finding.line}:{finding.column + 1}: {finding.code} {finding.message}"


class TextReporter(Reporter):
    def add(self, result: "FileResult") -> None:
        for finding in result.findings:
            print(format_line(finding), file=self.stream)


def format_statistics(tally: Tally) -> str:
    """One line per code, most frequent first: count, code, name."""
    rows = sorted(tally.by_code.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(count)) for _, count in rows), default=1)
    return "\n".join(f"{count:>{width}}  {code}  {tally.names[code]}" for code, count in rows)


def format_summary(tally: Tally) -> str:
    if not tally.total:
        return f"All checks passed ({plural(tally.files, 'file')} checked)."
    return f"Found {plural(tally.total, 'error')} in {plural(tally.files, 'file')} checked."


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
