"""The engine's own position pass gives exactly LibCST's ``PositionProvider`` ranges (for every
node) and the module's code."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchmemlint.engine import _positions_and_code

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCES = sorted(FIXTURES.rglob("*.py"))
EDGE_CASES = [
    "x = 1\r\ny = (\r\n    2)\r\n",
    "x = 1\ry = 2\r",
    "def f(\n    a,  # comment\n):\n    return a\n\n\n@d\nclass C: pass\n",
    "s = '''multi\nline''' + f'{x!r:>{w}}'\n",
    "\ufeffx = 1\n",
]


def _assert_same(module: cst.Module) -> None:
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions, code = _positions_and_code(module)
    assert positions == dict(reference)
    assert code == module.code


@pytest.mark.parametrize("text", EDGE_CASES)
def test_positions_of_edge_cases(text: str) -> None:
    _assert_same(cst.parse_module(text.encode()))


def test_positions_of_every_fixture() -> None:
    for path in SOURCES:
        _assert_same(cst.parse_module(path.read_bytes()))
