"""Where a finding is in its file, beyond its line and column: the file's lines (a notebook's:
per cell, as the notebook holds them) for source snippets and fingerprints, and a notebook cell's
positions as lines and columns of the raw ``.ipynb`` file, which code scanning and GitHub
annotations point at."""
from __future__ import annotations

import re
from typing import Optional

from torchmemlint.files import detect_encoding
from torchmemlint.notebooks import RawNotebook, is_notebook

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceLines:
    """A file's lines (a notebook's: per cell, as the notebook holds them), decoded once."""

    def __init__(self, path: str, raw: Optional[bytes]) -> None:
        self._path = path
        self._raw = raw
        self._lines: dict[Optional[int], list[str]] = {}

    def of(self, cell: Optional[int]) -> list[str]:
        if cell not in self._lines:
            self._lines[cell] = _LINE_BREAK.split(self._text(cell) or "")
        return self._lines[cell]

    def _text(self, cell: Optional[int]) -> Optional[str]:
        if self._raw is None:
            return None
        if is_notebook(self._path):
            notebook = RawNotebook.read(self._raw)
            return notebook.cell_text(cell) if notebook is not None and cell is not None else None
        return self._raw.decode(detect_encoding(self._raw), errors="replace").lstrip("\ufeff")


class Positions:
    """Regions of one file: a notebook's cell positions become the raw file's."""

    def __init__(self, path: str, raw: Optional[bytes]) -> None:
        self.notebook = RawNotebook.read(raw) if raw is not None and is_notebook(path) else None

    def region(self, cell: Optional[int], line: int, column: int, end_line: int, end_column: int) -> dict:
        """A SARIF region (1-based lines and columns) of a finding's span (0-based columns in;
        ``end_line`` 0: no end). In a notebook, the span's place in the raw file."""
        if cell is not None and self.notebook is not None:
            start = self.notebook.position(cell, line, column)
            end = self.notebook.position(cell, end_line, end_column) if end_line else None
            if start is None:  # the notebook changed since it was checked: at least the file
                return {"startLine": 1, "startColumn": 1}
            region = {"startLine": start[0], "startColumn": start[1] + 1}
            if end is not None and end >= start:
                region.update(endLine=end[0], endColumn=end[1] + 1)
            return region
        region = {"startLine": line, "startColumn": column + 1}
        if end_line and (end_line, end_column) >= (line, column):
            region.update(endLine=end_line, endColumn=end_column + 1)
        return region
