"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torchmemlint.report.base import Reporter

if TYPE_CHECKING:
    from torchmemlint.api import FileResult


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class GithubReporter(Reporter):
    def add(self, result: "FileResult") -> None:
        for finding in result.findings:
            properties = {
                "file": finding.path,
                "line": finding.line,
                "col": finding.column + 1,
                "title": finding.code if finding.cell is None else f"{finding.code} (cell {finding.cell})",
            }
            joined = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
            print(f"::error {joined}::{_escape_data(finding.message)}", file=self.stream)
