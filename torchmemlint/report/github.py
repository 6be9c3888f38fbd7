"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request,
spanning the finding (``line``/``col`` to ``endLine``/``endColumn``). A notebook's positions are
the raw ``.ipynb`` file's, since that is the file GitHub shows; the title names the cell."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torchmemlint.diagnostics import Diagnostic
from torchmemlint.notebooks import is_notebook
from torchmemlint.report.base import Reporter
from torchmemlint.report.source import Positions

if TYPE_CHECKING:
    from torchmemlint.api import FileResult


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    def add(self, result: "FileResult") -> None:
        findings = result.findings
        if not findings:
            return
        positions = Positions(result.path, self.options.read(result.path) if is_notebook(result.path) else None)
        for finding in findings:
            is_diagnostic = isinstance(finding, Diagnostic)
            region = positions.region(finding.cell, finding.line, finding.column,
                                      finding.end_line if is_diagnostic else 0,
                                      finding.end_column if is_diagnostic else 0)
            properties = {
                "file": finding.path,
                "line": region["startLine"],
                "endLine": region.get("endLine", region["startLine"]),
                "col": region["startColumn"],
                "endColumn": region.get("endColumn", region["startColumn"]),
                "title": finding.code if finding.cell is None else
                f"{finding.code} (cell {finding.cell}, line {finding.line})",
            }
            joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
            print(f"::error {joined}::{_escape_data(finding.message)}", file=self.stream)
