"""Every fixture under fixtures/ carries its expected diagnostics as trailing ``# expect:``
comments; a file without any expects nothing. A labelled fixture's ``name.py.expected`` holds
each diagnostic whole (position, code, message, its fix's safety class) and ``name.py.fixed``
the expected result of ``fix --unsafe-fixes``. ``python tests/update_fixture_expectations.py
[--fixed]`` rewrites both from what the linter does now, for review with ``git diff``."""
from __future__ import annotations

from pathlib import Path

import pytest

from support import assert_fixed_findings_gone
from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.labels import describe, expected_diagnostics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_diagnostics(path: Path) -> None:
    source = path.read_bytes()
    diagnostics, errors = check_source(source, str(path), ALL_RULES)
    assert not errors
    actual = {(d.line, d.code) for d in diagnostics}
    assert actual == expected_diagnostics(source.decode("utf-8"))


LABELLED = [p for p in FIXTURE_FILES if expected_diagnostics(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("path", LABELLED, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_whole_diagnostics(path: Path) -> None:
    """Column, message and the fix's safety class too, not only line and code."""
    expected = path.with_name(path.name + ".expected")
    assert expected.is_file(), "run tests/update_fixture_expectations.py and review the result"
    diagnostics, _ = check_source(path.read_bytes(), str(path), ALL_RULES)
    assert [describe(d) for d in sorted(diagnostics)] == expected.read_text(encoding="utf-8").splitlines()


FIXED_FILES = sorted(FIXTURES.rglob("*.py.fixed"))


@pytest.mark.parametrize("fixed", FIXED_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_fix(fixed: Path) -> None:
    original = fixed.with_suffix("")
    result = fix_source(original.read_bytes(), str(original), ALL_RULES, unsafe=True)
    assert not result.error
    assert result.source == fixed.read_bytes()
    again = fix_source(result.source, str(original), ALL_RULES, unsafe=True)
    assert again.source == result.source, "fixing is not idempotent"
    remaining, _ = check_source(result.source, str(original), ALL_RULES)
    # Each applied fix removed its finding (others of the same rule may stay, with no fix).
    found, _ = check_source(original.read_bytes(), str(original), ALL_RULES)
    assert_fixed_findings_gone(found, result.applied, remaining)
