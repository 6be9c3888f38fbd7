"""Every fixture under fixtures/ carries its expected diagnostics as trailing ``# expect:``
comments; a file without any expects nothing. A ``name.py.fixed`` next to ``name.py`` is the
expected result of ``fix --unsafe-fixes``."""
from __future__ import annotations

from pathlib import Path

import pytest

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.labels import expected_diagnostics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_diagnostics(path: Path) -> None:
    source = path.read_bytes()
    diagnostics, errors = check_source(source, str(path), ALL_RULES)
    assert not errors
    actual = {(d.line, d.code) for d in diagnostics}
    assert actual == expected_diagnostics(source.decode("utf-8"))


FIXED_FILES = sorted(FIXTURES.rglob("*.py.fixed"))


@pytest.mark.parametrize("fixed", FIXED_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_fix(fixed: Path) -> None:
    original = fixed.with_suffix("")
    result = fix_source(original.read_bytes(), str(original), ALL_RULES, unsafe=True)
    assert not result.error
    assert result.source == fixed.read_bytes()
    again = fix_source(result.source, str(original), ALL_RULES, unsafe=True)
    assert again.source == result.source, "fixing is not idempotent"
    fixed_codes = {d.code for d in result.applied}
    remaining, _ = check_source(result.source, str(original), ALL_RULES)
    assert not fixed_codes & {d.code for d in remaining}
