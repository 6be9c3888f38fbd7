"""Plain data passed between the engine, the reporters, the fixer and the verifier."""
from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass, field
from typing import Optional

# Set to 1, a crash while handling one file prints its traceback (the run still goes on).
DEBUG_VARIABLE = "TORCHMEMLINT_DEBUG"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based-line / 0-based-column positions by ``content``."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str
    # The text the span holds when the edit is made (the code of the node it replaces): ``fix``
    # applies the edit only over that text. None: not known (an edit built by hand).
    original: Optional[str] = field(default=None, compare=False)

    def to_json(self) -> dict:
        return {
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "content": self.content,
        }


@dataclass(frozen=True)
class Fix:
    """What a diagnostic's fix changes. ``safe`` fixes are applied by ``fix``; unsafe ones need
    ``--unsafe-fixes`` (RULES.md, "Fix safety"). ``edits`` is empty where the check was asked
    for none (``check`` output that shows no fixes)."""

    description: str
    safe: bool
    edits: tuple[Edit, ...] = ()

    def to_json(self) -> dict:
        return {
            "applicability": "safe" if self.safe else "unsafe",
            "safe": self.safe,
            "message": self.description,
            "edits": [e.to_json() for e in self.edits],
        }


@dataclass(frozen=True)
class Related:
    """A place that explains a finding: where the kept value was made, which return or container
    carried it. Positions as in ``Diagnostic`` (in a notebook, ``cell`` and a line in it)."""

    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    cell: Optional[int] = None

    def to_json(self) -> dict:
        return {"line": self.line, "column": self.column + 1, "end_line": self.end_line,
                "end_column": self.end_column + 1, "message": self.message, "cell": self.cell}


@dataclass(frozen=True)
class IterationSpan:
    """The repetition a finding is about, as the rule saw it: a loop (``kind`` "for"/"while"),
    or a function the code runs once per step (``kind`` "function", ``name`` its name). Lines
    1-based, inclusive. ``verify`` replays this span instead of re-deriving it from a line."""

    kind: str
    line: int
    end_line: int
    name: str = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, "line": self.line, "end_line": self.end_line, "name": self.name}


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. ``line`` is 1-based, ``column`` 0-based (flake8's convention); reporters
    print the column 1-based, as ruff and flake8 do."""

    path: str
    line: int
    column: int
    code: str
    message: str = field(compare=False)
    name: str = field(compare=False, default="")
    end_line: int = field(compare=False, default=0)
    end_column: int = field(compare=False, default=0)
    cell: Optional[int] = None  # in a notebook: the cell (1-based, every cell counted) ``line`` is in
    fix: Optional[Fix] = field(compare=False, default=None)
    # Why: where the value was made and how it travelled (a return, a container, an attribute).
    related: tuple[Related, ...] = field(compare=False, default=())
    iteration: Optional[IterationSpan] = field(compare=False, default=None)
    no_fix: str = field(compare=False, default="")  # why there is no fix, where the rule says

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column + 1,
            "end_line": self.end_line,
            "end_column": self.end_column + 1,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "cell": self.cell,
            "fix": self.fix.to_json() if self.fix else None,
            "related": [r.to_json() for r in self.related],
            "iteration": self.iteration.to_json() if self.iteration else None,
        }


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked (unreadable, not UTF-8, does not parse, ...)."""

    path: str
    message: str
    line: int = 1
    column: int = 0
    cell: Optional[int] = None  # in a notebook, as ``Diagnostic.cell``

    code = "TML000"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column + 1, "code": self.code,
                "name": "file-error", "message": self.message, "end_line": self.line,
                "end_column": self.column + 1, "cell": self.cell, "fix": None, "related": [],
                "iteration": None}


def unexpected_error(path: str, error: BaseException) -> FileError:
    """The one line that stands for a bug met while handling ``path`` (its traceback too, on
    stderr, with ``TORCHMEMLINT_DEBUG=1``): that file fails, the run goes on."""
    if isinstance(error, RecursionError):
        return FileError(path, "code nested too deeply to check")
    if os.environ.get(DEBUG_VARIABLE) == "1":
        traceback.print_exception(error, file=sys.stderr)
    detail = str(error).splitlines()[0] if str(error) else ""
    return FileError(path, f"internal error while checking this file: {type(error).__name__}"
                           f"{': ' + detail if detail else ''} (please report it; {DEBUG_VARIABLE}=1 shows "
                           f"the traceback)")


def warn(message: str) -> None:
    """A problem that does not stop anything (a file passed over), on stderr in one line."""
    print(f"torchmemlint: warning: {message}", file=sys.stderr)
