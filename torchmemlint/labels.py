"""The label format of labelled sources (the rule fixtures, the bench corpus): a trailing
``# expect: TML001`` (or ``# expect: TML001, TML004``) comment on each line where a diagnostic
is expected; a file without one expects nothing."""
from __future__ import annotations

import re

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TML\d{3}(?:\s*,\s*TML\d{3})*)")


def expected_diagnostics(source: str) -> set[tuple[int, str]]:
    """The (line, code) pairs a labelled source expects."""
    expected = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            expected.update((number, code.strip()) for code in match.group("codes").split(","))
    return expected
