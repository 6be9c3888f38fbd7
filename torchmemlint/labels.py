"""The label format of labelled sources (the rule fixtures, the bench corpus): a trailing
``# expect: TML001`` (or ``# expect: TML001, TML004``) comment on each line where a diagnostic
is expected; a file without one expects nothing. A rule fixture's ``NAME.py.expected`` holds
each whole diagnostic (``describe``): position, code, message and its fix's safety class."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchmemlint.diagnostics import Diagnostic

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TML\d{3}(?:\s*,\s*TML\d{3})*)")


def expected_diagnostics(source: str) -> set[tuple[int, str]]:
    """The (line, code) pairs a labelled source expects."""
    expected = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            expected.update((number, code.strip()) for code in match.group("codes").split(","))
    return expected


def describe(diagnostic: "Diagnostic") -> str:
    """One diagnostic as a fixture's ``.expected`` file spells it: ``LINE:COLUMN CODE [FIX] MESSAGE``
    (column 1-based, as reported), FIX being ``safe``, ``unsafe``, or ``no fix`` with the rule's
    reason where it gives one (``no fix: what the value holds is not known ...``)."""
    fix = diagnostic.fix
    reason = diagnostic.no_fix.replace("no automatic fix: ", "", 1)
    applicability = ("safe" if fix.safe else "unsafe") if fix is not None else f"no fix: {reason}" if reason else "no fix"
    return f"{diagnostic.line}:{diagnostic.column + 1} {diagnostic.code} [{applicability}] {diagnostic.message}"
