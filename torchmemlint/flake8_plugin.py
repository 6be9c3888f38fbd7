"""flake8 plugin (entry point ``TML`` in group ``flake8.extension``): a thin adapter over the
engine, so that ``flake8 --select=TML`` reports what ``torchmemlint check`` reports.

flake8 applies its own ``# noqa``, ``--select`` and ``--ignore``; the plugin only decides which
rules run. Rules that are off by default run only when their full code is in flake8's
``--select`` or ``--extend-select`` (``--select=TML`` does not turn them on), as with
``torchmemlint check``.

flake8 loads every installed plugin on every run and calls each one for every file, whatever
``--select`` says: loading imports nothing of the engine (LibCST, the rules), and a run whose
selection leaves out every TML code returns at once. The engine loads on the first file that
is checked.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, ClassVar, Iterator, Optional, Sequence

from torchmemlint import __version__

if TYPE_CHECKING:
    from torchmemlint.rules.base import Rule

CODE_PREFIX = "TML"
# PEP 263: the encoding declaration flake8 decoded the file with, in its first two lines.
_CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def selects_tml(select: Optional[Sequence[str]], extend_select: Sequence[str], ignore: Sequence[str]) -> bool:
    """Whether flake8 could report a TML code under these options: one of them names a TML
    code, or nothing is selected explicitly (flake8 then reports every plugin's codes) and no
    ignore covers TML as a whole."""
    def covers_tml(selector: str) -> bool:  # "T", "TM", "TML" cover all TML codes
        return CODE_PREFIX.startswith(selector.strip().upper())

    def names_tml(selector: str) -> bool:  # ... and "TML001", "TML0" name some
        return covers_tml(selector) or selector.strip().upper().startswith(CODE_PREFIX)

    if any(names_tml(s) for s in (*(select or ()), *extend_select)):
        return True
    return not select and not any(covers_tml(s) for s in ignore if s.strip())


class TorchMemLintChecker:
    name = "torchmemlint"
    version = __version__

    # The selection flake8 was started with (``parse_options``); the rules it means, on first use.
    selected: ClassVar[bool] = True
    named_codes: ClassVar[frozenset[str]] = frozenset()
    _rules: ClassVar[Optional[tuple["Rule", ...]]] = None

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options) -> None:
        """Remember what flake8 selects: whether any TML code, and which codes by name (the
        off-by-default rules they turn on)."""
        select = getattr(options, "select", None)
        extend_select = getattr(options, "extend_select", None) or ()
        ignore = (*(getattr(options, "ignore", None) or ()), *(getattr(options, "extend_ignore", None) or ()))
        cls.selected = selects_tml(select, extend_select, ignore)
        cls.named_codes = frozenset(code.strip().upper() for code in (*(select or ()), *extend_select))
        cls._rules = None

    @classmethod
    def rules(cls) -> tuple["Rule", ...]:
        if cls._rules is None:
            from torchmemlint.config import RuleSelection, select_rules
            from torchmemlint.rules import ALL_RULES

            cls._rules = select_rules(ALL_RULES, (RuleSelection(extend_select=tuple(
                rule.code for rule in ALL_RULES if rule.code in cls.named_codes)),))
        return cls._rules

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if not self.selected:
            return
        from torchmemlint import engine

        diagnostics, errors = engine.check_source(self._source(), self.filename, self.rules(),
                                                  apply_noqa=False, fix_edits=False)
        for finding in [*errors, *diagnostics]:
            yield finding.line, finding.column, f"{finding.code} {finding.message}", type(self)

    def _source(self) -> bytes:
        """flake8 hands over decoded lines; encode them back as the file declares, so that the
        engine decodes exactly the text ``torchmemlint check`` sees."""
        text = "".join(self.lines)
        encoding = "utf-8"
        for line in self.lines[:2]:
            match = _CODING_COOKIE.match(line)
            if match:
                encoding = match.group(1)
                break
        try:
            return text.encode(encoding)
        except (LookupError, UnicodeEncodeError):
            return text.encode("utf-8", errors="surrogateescape")
