"""Metamorphic tests: each rule fixture, rewritten without changing its meaning (tests/metamorphic/
rewrites.py: aliased imports, renamed variables, ``for`` as ``while``, the loop body in a
function or a method, values returned in a tuple or dict or wrapped in an output object, a
notebook, decorators, an inlined helper), must get the same findings at the lines its markers
moved to: an invalid fixture stays flagged, a valid one stays silent.

Pairs that fail today because a rule does not follow the rewritten shape are listed in
tests/metamorphic/known_failures.txt and expected to fail (strictly: once a rule handles the
shape, the test fails until the entry is removed)."""
from __future__ import annotations

import pytest

from metamorphic.cases import KNOWN_FAILURES, Variant, known_failures, variants


def _cases():
    known = known_failures()
    for variant in variants():
        cause = known.get(variant.id)
        marks = [pytest.mark.xfail(strict=True, reason=f"known gap ({KNOWN_FAILURES.name}): {cause}")] if cause else []
        yield pytest.param(variant, id=variant.id, marks=marks)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """Where the notebook variants are written to be checked as files."""
    return tmp_path_factory.mktemp("metamorphic")


@pytest.mark.parametrize("variant", list(_cases()))
def test_rewrite_keeps_findings(variant: Variant, scratch) -> None:
    expected = variant.expected()
    actual = variant.findings(scratch)
    assert actual == expected, (
        f"{variant.id}: missing {sorted(expected - actual, key=str)}, "
        f"unexpected {sorted(actual - expected, key=str)}\n--- rewritten source ---\n{variant.source}")


def test_known_failures_name_existing_cases() -> None:
    """Every listed failure is a pair that exists (a renamed fixture or a rewrite that stopped
    applying leaves no silent entry behind)."""
    ids = {variant.id for variant in variants()}
    assert sorted(set(known_failures()) - ids) == []
