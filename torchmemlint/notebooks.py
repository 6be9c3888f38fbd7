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
from typing import Union

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
