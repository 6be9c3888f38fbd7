"""Jupyter notebooks: their code cells as one Python source for the engine, and each position in
that source mapped back to a cell and a line in it.

IPython syntax is not Python: a line magic or shell escape (``%matplotlib inline``,
``!nvidia-smi``, ``x?``) becomes ``pass`` at its indentation, so the lines keep their numbers and
blocks stay valid; a cell magic (``%%bash``) makes the whole cell blank, except the timing and
capture magics, whose bodies are Python (only their first line is dropped).
"""
from __future__ import annotations

import ast
import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterator, Optional, Union

SUFFIX = ".ipynb"
# Cell magics whose body is Python run as is.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE_MAGIC = re.compile(r"^(\s*)(?:[%!]|\?\??[\w.]+\s*$|[\w.]+\?\??\s*$)")  # %time x, !ls, ?f, f?
_ASSIGNED_MAGIC = re.compile(r"^(\s*)([\w.]+)\s*=\s*[%!]")  # files = !ls


@dataclass(frozen=True)
class Notebook:
    """The code cells joined into one source (UTF-8), and where each cell starts in it."""

    source: bytes
    cell_numbers: tuple[int, ...]  # 1-based position of each code cell among all cells
    first_lines: tuple[int, ...]  # 1-based line of ``source`` where each code cell starts

    def locate(self, line: int) -> tuple[int, int]:
        """The cell (1-based, counting every cell) and the line in it of a line of ``source``."""
        if not self.first_lines:
            return 1, line
        index = max(bisect_right(self.first_lines, line) - 1, 0)
        return self.cell_numbers[index], line - self.first_lines[index] + 1


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


def read_notebook(raw: bytes) -> Union[Notebook, str]:
    """The notebook's code, or why it is not a notebook that can be checked."""
    try:
        document = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as error:
        return f"not a valid notebook (JSON): {error}"
    except RecursionError:  # (the standard library's decoder recurses once per nested array)
        return "not a valid notebook: its JSON is nested too deeply"
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        return "not a valid notebook: no list of cells"
    language = (document.get("metadata") or {}).get("language_info", {}).get("name", "python") \
        if isinstance(document.get("metadata"), dict) else "python"
    if isinstance(language, str) and language.lower() != "python":
        return f"a {language} notebook, not Python"
    lines: list[str] = []
    numbers: list[int] = []
    firsts: list[int] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        if isinstance(text, list):
            text = "".join(part for part in text if isinstance(part, str))
        if not isinstance(text, str):
            return f"not a valid notebook: cell {number} has no source text"
        numbers.append(number)
        firsts.append(len(lines) + 1)
        lines.extend(_python_lines(text))
    source = "".join(line + "\n" for line in lines)
    return Notebook(source.encode("utf-8"), tuple(numbers), tuple(firsts))


def _python_lines(text: str) -> list[str]:
    """A cell's lines, IPython syntax replaced (one line out for each line in). A cell that is
    valid Python as it stands is left alone (``%(a, b)`` continuing a string formatting, say)."""
    lines = text.splitlines() or [""]
    first = lines[0].strip()
    if first.startswith("%%"):
        magic = first[2:].split(maxsplit=1)[0] if len(first) > 2 else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return ["" for _ in lines]  # %%bash, %%writefile, ...: not Python
        lines = ["", *lines[1:]]
    elif _parses(text):
        return lines
    python: list[str] = []
    continued = None  # the indentation of a magic whose last line ended with a backslash
    for line in lines:
        if continued is not None:
            python.append(f"{continued}pass")  # ``!apt-get install \`` goes on here
        else:
            assigned = _ASSIGNED_MAGIC.match(line)
            magic = _LINE_MAGIC.match(line)
            if assigned is not None:
                python.append(f"{assigned.group(1)}{assigned.group(2)} = None")
            elif magic is not None:
                python.append(f"{magic.group(1)}pass")
            else:
                python.append(line)
                continue
            continued = (assigned or magic).group(1)
        if not line.endswith("\\"):
            continued = None
    return python


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class RawNotebook:
    """Where each cell's source text lies in the notebook file itself, so that a position in a
    cell (1-based cell, 1-based line, 0-based column) can be given as a line and column of the
    raw ``.ipynb``: what GitHub code scanning and annotations point at.

    A cell's source is one JSON string or a list of them (usually one per line); each string
    token is decoded character by character, so escapes (``\\"``, ``\\n``, ``\\uXXXX``) map to
    the raw column they start at."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line_starts = [0, *(index + 1 for index, char in enumerate(text) if char == "\n")]
        self._sources = _cell_source_tokens(text)  # per cell (every cell counted): string token spans

    @classmethod
    def read(cls, raw: bytes) -> "RawNotebook | None":
        try:
            return cls(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, IndexError):
            return None

    def cell_text(self, cell: int) -> Optional[str]:
        """A cell's source as the notebook holds it (IPython syntax included)."""
        tokens = self._tokens(cell)
        try:
            return None if tokens is None else "".join(json.loads(self.text[start:end]) for start, end in tokens)
        except ValueError:  # an invalid escape: not JSON after all
            return None

    def position(self, cell: int, line: int, column: int) -> Optional[tuple[int, int]]:
        """The raw file's 1-based line and 0-based column (code points) of a cell position."""
        tokens = self._tokens(cell)
        if tokens is None:
            return None
        current_line, current_column = 1, 0
        last = None
        for start, end in tokens:
            index = start + 1  # after the opening quote
            while index < end - 1:
                if (current_line, current_column) == (line, column):
                    return self._line_column(index)
                char, index = _json_char(self.text, index)
                if char == "\n":
                    current_line, current_column = current_line + 1, 0
                else:
                    current_column += 1
            last = end - 1
        if last is not None and (current_line, current_column) == (line, column):
            return self._line_column(last)  # the end of the cell's text
        return None

    def _tokens(self, cell: int) -> Optional[list[tuple[int, int]]]:
        if not 1 <= cell <= len(self._sources):
            return None
        return self._sources[cell - 1]

    def _line_column(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1]


def _json_char(text: str, index: int) -> tuple[str, int]:
    """The character a JSON string holds at ``index`` (an escape counts as one) and the index
    after it; a surrogate pair written as two escapes is one character."""
    char = text[index]
    if char != "\\":
        return char, index + 1
    kind = text[index + 1]
    if kind != "u":
        return json.loads(f'"{text[index:index + 2]}"'), index + 2
    code = int(text[index + 2:index + 6], 16)
    if 0xD800 <= code < 0xDC00 and text[index + 6:index + 8] == "\\u":
        return json.loads(f'"{text[index:index + 12]}"'), index + 12
    return chr(code), index + 6


_WHITESPACE = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^,\]}\s]+")


def _cell_source_tokens(text: str) -> list[Optional[list[tuple[int, int]]]]:
    """For each cell of the notebook, the spans of the JSON string tokens of its ``source``
    (None for a cell without one). Raises ``ValueError``/``IndexError`` on malformed JSON."""
    scanner = _Scanner(text)
    cells: list[Optional[list[tuple[int, int]]]] = []
    for key in scanner.object_keys():
        if key != "cells":
            scanner.skip_value()
            continue
        for _ in scanner.array_items():
            sources: Optional[list[tuple[int, int]]] = None
            if scanner.peek() != "{":
                scanner.skip_value()
            else:
                for cell_key in scanner.object_keys():
                    if cell_key == "source":
                        sources = scanner.strings()
                    else:
                        scanner.skip_value()
            cells.append(sources)
    return cells


class _Scanner:
    """Just enough of a JSON reader to walk to the cells' sources and know where they are."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0

    def peek(self) -> str:
        self.index = _WHITESPACE.match(self.text, self.index).end()
        return self.text[self.index]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise ValueError(f"expected {char!r} at {self.index}")
        self.index += 1

    def string(self) -> tuple[int, int]:
        self.peek()
        match = _STRING.match(self.text, self.index)
        if match is None:
            raise ValueError(f"expected a string at {self.index}")
        self.index = match.end()
        return match.span()

    def object_keys(self) -> Iterator[str]:
        """Each key of an object (the caller reads or skips its value)."""
        self.expect("{")
        if self.peek() == "}":
            self.index += 1
            return
        while True:
            start, end = self.string()
            self.expect(":")
            yield json.loads(self.text[start:end])
            if self.peek() == ",":
                self.index += 1
                continue
            self.expect("}")
            return

    def array_items(self) -> Iterator[None]:
        """Once per item of an array (the caller reads or skips it)."""
        self.expect("[")
        if self.peek() == "]":
            self.index += 1
            return
        while True:
            yield None
            if self.peek() == ",":
                self.index += 1
                continue
            self.expect("]")
            return

    def strings(self) -> list[tuple[int, int]]:
        """A string, or an array of strings: their token spans."""
        if self.peek() == '"':
            return [self.string()]
        spans = []
        for _ in self.array_items():
            spans.append(self.string())
        return spans

    def skip_value(self) -> None:
        char = self.peek()
        if char == "{":
            for _ in self.object_keys():
                self.skip_value()
        elif char == "[":
            for _ in self.array_items():
                self.skip_value()
        elif char == '"':
            self.string()
        else:
            match = _SCALAR.match(self.text, self.index)
            if match is None:
                raise ValueError(f"unexpected {char!r} at {self.index}")
            self.index = match.end()
