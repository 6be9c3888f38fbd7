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
from dataclasses import dataclass, replace
from hashlib import sha1
from typing import Callable, Iterator, Optional, Sequence, Union

from torchmemlint.diagnostics import Diagnostic, FileError

SUFFIX = ".ipynb"
BOM = b"\xef\xbb\xbf"  # (JSON readers take UTF-8 with one)
# Cell magics whose body is Python run as is.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINE_MAGIC = re.compile(r"^(\s*)(?:[%!]|\?\??[\w.]+\s*$|[\w.]+\?\??\s*$)")  # %time x, !ls, ?f, f?
_ASSIGNED_MAGIC = re.compile(r"^(\s*)([\w.]+)\s*=\s*[%!]")  # files = !ls


@dataclass(frozen=True)
class CodeCell:
    """One code cell: its number (1-based, every cell counted), its source as the notebook holds
    it, and its lines as Python (``python``), with which of them stand for IPython syntax."""

    number: int
    text: str
    python: tuple[str, ...]
    replaced: tuple[bool, ...]


@dataclass(frozen=True)
class Notebook:
    """The code cells joined into one source (UTF-8), and where each cell starts in it."""

    source: bytes
    cell_numbers: tuple[int, ...]  # 1-based position of each code cell among all cells
    first_lines: tuple[int, ...]  # 1-based line of ``source`` where each code cell starts
    cells: tuple[CodeCell, ...] = ()

    def locate(self, line: int) -> tuple[int, int]:
        """The cell (1-based, counting every cell) and the line in it of a line of ``source``."""
        if not self.first_lines:
            return 1, line
        index = max(bisect_right(self.first_lines, line) - 1, 0)
        return self.cell_numbers[index], line - self.first_lines[index] + 1


def place_in_cells(diagnostics: Sequence[Diagnostic], errors: Sequence[FileError],
                   locate: Callable[[int], tuple[int, int]]) -> tuple[list[Diagnostic], list[FileError]]:
    """Findings on the joined code given as a cell and a line in it (``locate``: a ``Notebook``'s,
    or an ``EditableCells``'s). A fix keeps what it is and whether it is safe, not its edits:
    their positions are the joined code's, which is no file's (``fix`` applies them)."""
    placed = []
    for diagnostic in diagnostics:
        cell, line = locate(diagnostic.line)
        end_cell, end_line = locate(diagnostic.end_line)
        related = tuple(replace(place, cell=place_cell, line=place_line,
                                end_line=place_end_line if place_end_cell == place_cell else place_line)
                        for place in diagnostic.related
                        for (place_cell, place_line), (place_end_cell, place_end_line)
                        in [(locate(place.line), locate(place.end_line))])
        fix = replace(diagnostic.fix, edits=()) if diagnostic.fix is not None else None
        placed.append(replace(diagnostic, cell=cell, line=line, fix=fix, related=related,
                              end_line=end_line if end_cell == cell else line))
    return placed, [replace(error, cell=cell, line=line) for error in errors for cell, line in [locate(error.line)]]


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
    code_cells: list[CodeCell] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        if isinstance(text, list):
            text = "".join(part for part in text if isinstance(part, str))
        if not isinstance(text, str):
            return f"not a valid notebook: cell {number} has no source text"
        python, replaced = _translate(text)
        numbers.append(number)
        firsts.append(len(lines) + 1)
        lines.extend(python)
        code_cells.append(CodeCell(number, text, tuple(python), tuple(replaced)))
    source = "".join(line + "\n" for line in lines)
    return Notebook(source.encode("utf-8"), tuple(numbers), tuple(firsts), tuple(code_cells))


def _python_lines(text: str) -> list[str]:
    """A cell's lines, IPython syntax replaced (one line out for each line in). A cell that is
    valid Python as it stands is left alone (``%(a, b)`` continuing a string formatting, say)."""
    return _translate(text)[0]


def _translate(text: str) -> tuple[list[str], list[bool]]:
    """``_python_lines``, and for each line whether it stands for IPython syntax."""
    lines = text.splitlines() or [""]
    first = lines[0].strip()
    if first.startswith("%%"):
        magic = first[2:].split(maxsplit=1)[0] if len(first) > 2 else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return ["" for _ in lines], [True for _ in lines]  # %%bash, %%writefile, ...: not Python
        python, replaced = _translate_lines(lines[1:])
        return ["", *python], [True, *replaced]
    if _parses(text):
        return lines, [False for _ in lines]
    return _translate_lines(lines)


def _translate_lines(lines: list[str]) -> tuple[list[str], list[bool]]:
    python: list[str] = []
    replaced: list[bool] = []
    continued = None  # the indentation of a magic whose last line ended with a backslash
    for line in lines:
        if continued is not None:
            python.append(f"{continued}pass")  # ``!apt-get install \\`` goes on here
        else:
            assigned = _ASSIGNED_MAGIC.match(line)
            magic = _LINE_MAGIC.match(line)
            if assigned is not None:
                python.append(f"{assigned.group(1)}{assigned.group(2)} = None")
            elif magic is not None:
                python.append(f"{magic.group(1)}pass")
            else:
                python.append(line)
                replaced.append(False)
                continue
            continued = (assigned or magic).group(1)
        replaced.append(True)
        if not line.endswith("\\"):
            continued = None
    return python, replaced


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
        self._sources = _cell_sources(text)  # per cell (every cell counted)

    @classmethod
    def read(cls, raw: bytes) -> "RawNotebook | None":
        try:
            return cls(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, IndexError, RecursionError):
            return None

    @property
    def cell_count(self) -> int:
        return len(self._sources)

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
        source = self._sources[cell - 1]
        return None if source is None else source.tokens

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


@dataclass(frozen=True)
class _SourceValue:
    """Where a cell's ``source`` value lies in the raw file: the whole value (a string, or an
    array of them: brackets included) and each string token in it."""

    span: tuple[int, int]
    tokens: list[tuple[int, int]]
    is_array: bool


def _cell_sources(text: str) -> list[Optional[_SourceValue]]:
    """For each cell of the notebook, where its ``source`` lies (None for a cell without one).
    Raises ``ValueError``/``IndexError`` on malformed JSON."""
    scanner = _Scanner(text)
    cells: list[Optional[_SourceValue]] = []
    for key in scanner.object_keys():
        if key != "cells":
            scanner.skip_value()
            continue
        for _ in scanner.array_items():
            source: Optional[_SourceValue] = None
            if scanner.peek() != "{":
                scanner.skip_value()
            else:
                for cell_key in scanner.object_keys():
                    if cell_key == "source":
                        is_array = scanner.peek() == "["  # (past the whitespace: at the value)
                        start = scanner.index
                        tokens = scanner.strings()
                        source = _SourceValue((start, scanner.index), tokens, is_array)
                    else:
                        scanner.skip_value()
            cells.append(source)
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


# Rewriting the code cells: what ``fix`` edits, and the way back into the notebook.


class EditableCells:
    """A notebook's code as ``fix`` edits it, and the way back into the notebook's cells.

    ``text`` is ``Notebook.source`` with comments added, which Python ignores and no fix edits:
    a line before each code cell after the first naming it, and after each line that stands for
    IPython syntax, one naming the line of the cell it stands for. The fixed text is cut back into
    cells at the first kind; the second puts each magic back where its stand-in went (indented as
    the stand-in now is). The comments carry a token no cell contains, so that no code is taken
    for one. ``cut`` says why a fixed text cannot go back (the ``fix`` safety net skips the fixes
    that make such a text); ``write`` splices the changed cells' sources into the raw file."""

    def __init__(self, text: str, notebook: Notebook, sources: list[Optional[_SourceValue]], bom: bool = False) -> None:
        self._raw = text
        self._bom = bom
        self._sources = sources
        self.cells = notebook.cells
        token = "torchmemlint-" + sha1(text.encode("utf-8")).hexdigest()[:12]
        while any(token in cell.text for cell in self.cells):
            token += "x"
        self._cell_comment = f"# {token} cell "
        self._magic = re.compile(rf"(\s*)(.*?)\s*# {re.escape(token)} magic (\d+):(\d+)")
        lines = []
        for index, cell in enumerate(self.cells):
            if index:
                lines.append(f"{self._cell_comment}{cell.number}")
            for number, (python, replaced) in enumerate(zip(cell.python, cell.replaced)):
                mark = f"# {token} magic {cell.number}:{number}"
                lines.append((f"{python}  {mark}" if python.strip() else mark) if replaced else python)
        self.text = "".join(line + "\n" for line in lines)

    @classmethod
    def read(cls, raw: bytes, notebook: Notebook) -> Union["EditableCells", str]:
        """The notebook's cells, ready to be edited, or why it cannot be rewritten in place."""
        try:
            text = raw.removeprefix(BOM).decode("utf-8")
            sources = _cell_sources(text)
        except (UnicodeDecodeError, ValueError, IndexError, RecursionError):
            return "its JSON cannot be rewritten in place (not UTF-8, or laid out unusually)"
        if len(sources) != len(json.loads(text)["cells"]) or any(sources[c.number - 1] is None for c in notebook.cells):
            return "its JSON cannot be rewritten in place (a repeated key, or a code cell without a source)"
        return cls(text, notebook, sources, raw.startswith(BOM))

    def locate(self, text: str) -> Callable[[int], tuple[int, int]]:
        """The cell and the line in it of each line of ``text`` (``self.text``, fixed or not)."""
        numbers, firsts = [self.cells[0].number] if self.cells else [], [1] if self.cells else []
        for index, line in enumerate(text.split("\n"), start=1):
            if line.startswith(self._cell_comment) and line[len(self._cell_comment):].isdigit():
                numbers.append(int(line[len(self._cell_comment):]))
                firsts.append(index + 1)
        return Notebook(b"", tuple(numbers), tuple(firsts)).locate

    def cut(self, text: str) -> Union[dict[int, str], str]:
        """The new source of each code cell that ``text`` (``self.text`` fixed) changes, by
        cell number; or why ``text`` cannot be put back into the notebook."""
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        pieces: list[list[str]] = [[]]
        expected = [cell.number for cell in self.cells[1:]]
        for line in lines:
            if self._cell_comment in line:
                if len(pieces) > len(expected) or line != f"{self._cell_comment}{expected[len(pieces) - 1]}":
                    return "it moves code across the notebook's cells"
                pieces.append([])
            else:
                pieces[-1].append(line)
        if len(pieces) != len(self.cells):
            return "it moves code across the notebook's cells"
        changed = {}
        for cell, piece in zip(self.cells, pieces):
            restored = self._restored(cell, piece)
            if restored is None:
                return "it edits an IPython magic line"
            if restored == (cell.text.splitlines() or [""]):
                continue
            if not _plain_line_breaks(cell.text):
                return f"cell {cell.number} has line breaks other than \\n"
            new_text = "\n".join(restored) + ("\n" if restored and cell.text.endswith("\n") else "")
            python = [line if self._magic.fullmatch(line) is None else self._stand_in(line) for line in piece]
            if _translate(new_text)[0] != (python or [""]):
                return f"cell {cell.number} would read differently once written back"
            if _parses("\n".join(cell.python)) and not _parses("\n".join(python)):
                return f"cell {cell.number} would not parse on its own"
            changed[cell.number] = new_text
        return changed

    def _restored(self, cell: CodeCell, lines: list[str]) -> Optional[list[str]]:
        """The cell's fixed ``lines`` with its magics put back, or None where a magic's stand-in
        was edited, moved to another cell, repeated or dropped."""
        raw_lines = cell.text.splitlines() or [""]
        restored, seen = [], []
        for line in lines:
            mark = self._magic.fullmatch(line)
            if mark is None:
                restored.append(line)
                continue
            index = int(mark.group(4))
            if int(mark.group(3)) != cell.number or index >= len(cell.python):
                return None
            stand_in = cell.python[index]
            if mark.group(2) != stand_in.strip():
                return None
            seen.append(index)
            indent, old_indent = mark.group(1), stand_in[:len(stand_in) - len(stand_in.lstrip())]
            raw = raw_lines[index]
            if not stand_in.strip() or indent == old_indent:
                restored.append(raw)
            else:
                restored.append(indent + (raw[len(old_indent):] if raw.startswith(old_indent) else raw.lstrip()))
        if seen != [index for index, replaced in enumerate(cell.replaced) if replaced]:
            return None
        return restored

    def _stand_in(self, line: str) -> str:
        """The Python a marked line stands for, as ``read_notebook`` makes it."""
        mark = self._magic.fullmatch(line)
        return mark.group(1) + mark.group(2) if mark.group(2) else ""

    def write(self, changed: dict[int, str]) -> Union[bytes, str]:
        """The raw notebook with the ``changed`` cells' sources, every other byte as it was; each
        source is written as the file writes them (a string or a list of lines, the same
        indentation, non-ASCII characters escaped or not). Or why it cannot be (a safeguard:
        the result must read as the same document but for those sources)."""
        ensure_ascii = _escapes_non_ascii(self._raw)
        pieces, previous = [], 0
        for number in sorted(changed):
            value = self._sources[number - 1]
            pieces.append(self._raw[previous:value.span[0]])
            pieces.append(self._value(value, changed[number], ensure_ascii))
            previous = value.span[1]
        pieces.append(self._raw[previous:])
        new_raw = "".join(pieces)
        expected = json.loads(self._raw)
        for number, text in changed.items():
            source = expected["cells"][number - 1]["source"]
            expected["cells"][number - 1]["source"] = \
                text.splitlines(keepends=True) if isinstance(source, list) else text
        if json.loads(new_raw) != expected:
            return "writing the cells back would change other parts of the notebook"
        return (BOM if self._bom else b"") + new_raw.encode("utf-8")

    def _value(self, value: _SourceValue, text: str, ensure_ascii: bool) -> str:
        if not value.is_array:
            return json.dumps(text, ensure_ascii=ensure_ascii)
        items = [json.dumps(line, ensure_ascii=ensure_ascii) for line in text.splitlines(keepends=True)]
        if not items:
            return "[]"
        (start, end), tokens, raw = value.span, value.tokens, self._raw
        if tokens:
            opening, closing = raw[start + 1:tokens[0][0]], raw[tokens[-1][1]:end - 1]
            separator = raw[tokens[0][1]:tokens[1][0]] if len(tokens) > 1 else \
                "," + opening if "\n" in opening else ", "
        elif "\n" in raw:  # ``"source": []`` in an indented file: one level deeper than the key
            line_start = raw.rfind("\n", 0, start) + 1
            key_line = raw[line_start:start]
            indent = key_line[:len(key_line) - len(key_line.lstrip(" \t"))]
            unit = re.match(r"[{\[]\n([ \t]*)", raw)
            opening, closing = "\n" + indent + (unit.group(1) if unit else " "), "\n" + indent
            separator = "," + opening
        else:
            opening, closing, separator = "", "", ", "
        return "[" + opening + separator.join(items) + closing + "]"


def _plain_line_breaks(text: str) -> bool:
    """Whether every line of ``text`` ends with ``\\n`` (or is the last): the lines a fixed
    cell is rebuilt from can then be joined back as they were."""
    lines = text.splitlines()
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "") == text


_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file was written with ``ensure_ascii`` (non-ASCII characters as ``\\uXXXX``):
    it holds no non-ASCII character, and at least one such escape (nbformat writes them as they
    are, so that is the default)."""
    if not text.isascii():
        return False
    return any(match.group(1) and int(match.group(1), 16) > 0x7F for match in _ESCAPE.finditer(text))
