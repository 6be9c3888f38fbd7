"""A JSON array with one object per finding, file errors included (code ``TML000``).
The format is documented in docs/json-format.md; other tools parse it, so it stays stable."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from torchmemlint.report.base import Reporter, ReportOptions

if TYPE_CHECKING:
    from torchmemlint.api import FileResult


class JsonReporter(Reporter):
    shows_fix_edits = True

    def __init__(self, stream, options: ReportOptions = ReportOptions()) -> None:
        super().__init__(stream, options)
        self._objects: list[dict] = []

    def add(self, result: "FileResult") -> None:
        self._objects.extend(finding.to_json() for finding in result.findings)

    def finish(self) -> None:
        json.dump(self._objects, self.stream, indent=2, ensure_ascii=False)
        self.stream.write("\n")
