"""flake8 plugin (entry point ``TML`` in group ``flake8.extension``): a thin adapter over the
engine, so that ``flake8 --select=TML`` reports what ``torchmemlint check`` reports.

flake8 applies its own ``# noqa``, ``--select`` and ``--ignore``; the plugin only decides which
rules run. Rules that are off by default run only when their full code is in flake8's
``--select`` or ``--extend-select`` (``--select=TML`` does not turn them on), as with
``torchmemlint check``.
"""
from __future__ import annotations

import ast
import re
from typing import ClassVar, Iterator, Sequence

from torchmemlint import __version__, engine
from torchmemlint.config import RuleSelection, select_rules
from torchmemlint.rules import ALL_RULES
from torchmemlint.rules.base import Rule

# PEP 263: the encoding declaration flake8 decoded the file with, in its first two lines.
_CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class TorchMemLintChecker:
    name = "torchmemlint"
    version = __version__

    rules: ClassVar[tuple[Rule, ...]] = select_rules(ALL_RULES, ())

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options) -> None:
        """Add the off-by-default rules whose full code is in flake8's select options."""
        named = {*(options.select or ()), *(getattr(options, "extend_select", None) or ())}
        cls.rules = select_rules(ALL_RULES, (RuleSelection(extend_select=tuple(
            rule.code for rule in ALL_RULES if rule.code in named)),))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        diagnostics, errors = engine.check_source(self._source(), self.filename, self.rules,
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
