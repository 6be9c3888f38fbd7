"""The engine's shortcuts give LibCST's own results: its position pass gives exactly
``PositionProvider``'s ranges (for every node) and the module's code, and parsing without
node validation builds the same trees."""
from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchmemlint import engine, split_parse
from torchmemlint.engine import _LineCheck, _positions, _positions_and_code, check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.semantics.prescreen import scan
from torchmemlint.semantics.tree import Tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SOURCES = sorted(FIXTURES.rglob("*.py"))
EDGE_CASES = [
    "# header\n\nimport os; import sys\n\n\n# before the decorator\n@d\n\n# between\n@e(1)\ndef f(): pass\nx = [\n  1]; y = 2\n",
    "x = 1\r\ny = (\r\n    2)\r\n",
    "x = 1\ry = 2\r",
    "def f(\n    a,  # comment\n):\n    return a\n\n\n@d\nclass C: pass\n",
    "s = '''multi\nline''' + f'{x!r:>{w}}'\n",
    "\ufeffx = 1\n",
]


def _assert_same(module: cst.Module, source: bytes) -> None:
    reference = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    positions, code = _positions_and_code(module)
    assert positions == reference
    assert code == module.code
    # Generating only the top-level statements that hold the nodes asked for, each from the
    # line ``ast`` gives it (or, in long ones, only their inner statements that hold them),
    # places every node where the whole module's generation does.
    tree = Tree(module)
    facts = scan(source, "t.py")
    nodes = [node for node in tree.start if node is not module]
    partial = _positions(module, tree, facts.statement_lines, nodes, _LineCheck(tree, facts.tree, {}), source)
    assert {node: partial[node] for node in nodes} == {node: reference[node] for node in nodes}


@pytest.fixture(params=["long statements", "every statement"])
def inner_positions_from(request, monkeypatch) -> None:
    """Inner statements' positions as configured, and for statements of any length."""
    if request.param == "every statement":
        monkeypatch.setattr(engine, "_INNER_POSITIONS_LINES", 0)


@pytest.mark.parametrize("text", EDGE_CASES)
def test_positions_of_edge_cases(text: str, inner_positions_from) -> None:
    _assert_same(cst.parse_module(text.encode()), text.encode())


def test_positions_of_every_fixture(inner_positions_from) -> None:
    for path in SOURCES:
        source = path.read_bytes()
        _assert_same(cst.parse_module(source), source)


def test_parsing_without_validation_builds_the_same_trees() -> None:
    from torchmemlint.engine import _parse_unvalidated

    for path in SOURCES:
        source = path.read_bytes()
        assert _parse_unvalidated(source).deep_equals(cst.parse_module(source)), path
    # and validation is back for nodes built afterwards
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")


def test_fixes_from_the_changed_statements_equal_those_from_the_whole_module(monkeypatch) -> None:
    from torchmemlint import engine
    from torchmemlint.rules import ALL_RULES

    sources = [(str(path), path.read_bytes()) for path in SOURCES]
    regional = [engine.check_source(source, path, ALL_RULES) for path, source in sources]
    monkeypatch.setattr(engine, "_regenerated_region", lambda *args: None)
    whole = [engine.check_source(source, path, ALL_RULES) for path, source in sources]
    assert sum(1 for diagnostics, _ in regional for d in diagnostics if d.fix) > 100
    for (path, _), (mine, errors), (reference, reference_errors) in zip(sources, regional, whole):
        assert [(d, d.fix, d.message) for d in mine] == [(d, d.fix, d.message) for d in reference], path
        assert errors == reference_errors


def test_diagnostics_without_fix_edits_differ_only_in_the_missing_edits() -> None:
    """``check`` output that shows no fixes skips the edits: the same diagnostics, and the same
    fixes (description and safety), on every fixture."""
    compared = 0
    for path in SOURCES:
        source = path.read_bytes()
        full, full_errors = check_source(source, str(path), ALL_RULES)
        lean, lean_errors = check_source(source, str(path), ALL_RULES, fix_edits=False)
        assert lean == full and lean_errors == full_errors, path
        for with_edits, without in zip(full, lean):
            assert (without.message, without.end_line, without.end_column) == \
                (with_edits.message, with_edits.end_line, with_edits.end_column), path
            if with_edits.fix is None:
                assert without.fix is None, path
            else:
                assert (without.fix.description, without.fix.safe, without.fix.edits) == \
                    (with_edits.fix.description, with_edits.fix.safe, ()), path
                compared += 1
    assert compared > 100


def test_nodes_still_equal_only_themselves_with_built_in_hashing() -> None:
    engine.parse(b"x = 1\n", "t.py")  # LibCST's first use: node classes hash in C from then on
    a, b = cst.Name("x"), cst.Name("x")
    assert type(a).__hash__ is object.__hash__ and cst.Module.__hash__ is object.__hash__
    assert a == a and a != b and not (a == b) and len({a, b, a}) == 2 and {a: 1}.get(b) is None
    assert a.deep_equals(b)


# Files that the parts must join exactly: comments between and after blocks (deeper, at the
# block's level, at column 0), decorators, a long last statement with lines after it, no newline
# at the end, two-space indentation that the first part (imports only) does not show, CRLF.
SPLIT_CASES = [
    "import os\nimport sys\n\n\nclass Trainer:\n  # first\n  def a(self):\n    x = 1\n    # deeper\n"
    "  # level\n# column 0\n  @d\n  def b(self):\n    return 2\n\n  def c(self): return 3\n\n\n"
    "def f():\n  for i in range(3):\n    pass\n  return 1\n  # after\n\n# trailing\n",
    "x = 1\r\ndef f():\r\n    a = 1\r\n    b = 2\r\n    c = 3\r\n\r\n\r\ny = 2\r\n",
    "def f():\n\ta = 1\n\tif a:\n\t\tb = 2\n\treturn b",
    "# header comment\n\n# attached\nclass C:\n    'doc'\n    x = 1; y = 2\n    def m(self):\n        pass\n",
]


@pytest.fixture
def tiny_parts(monkeypatch) -> None:
    """Every file parsed in parts of (about) one statement."""
    monkeypatch.setattr(split_parse, "MIN_LINES", 0)
    monkeypatch.setattr(split_parse, "PART_LINES", 1)


def _statements_and_expressions(module: cst.Module) -> list[tuple[str, object]]:
    """Each statement and expression, in order, with its position (comment lines, which the
    parts may attach to the next statement instead of the block before, are left out)."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    kinds = (cst.BaseStatement, cst.BaseSmallStatement, cst.BaseExpression)
    return [(type(node).__name__, positions[node]) for node in Tree(module).start if isinstance(node, kinds)]


@pytest.mark.parametrize("text", SPLIT_CASES + EDGE_CASES[:2] + EDGE_CASES[3:5])
def test_parsing_in_parts_gives_one_parse_s_code_and_positions(text: str, tiny_parts) -> None:
    source = text.encode()
    parts = split_parse.parse_in_parts(source, scan(source, "t.py").tree)
    whole = cst.parse_module(source)
    assert parts is not None
    assert parts.code == whole.code == text
    assert _statements_and_expressions(parts) == _statements_and_expressions(whole)
    _assert_same(parts, source)


@pytest.mark.parametrize("text", [
    "# -*- coding: latin-1 -*-\nx = 'caf\xe9'\ny = 1\n",  # later parts would not know the cookie
    "\ufeffx = 1\ny = 2\n",
    "x = 1\ry = 2\r",  # lone carriage returns
    "x = 1\ny = 2\r\nz = 3\r\n",  # parts that see different line ends
    "def f():\n    return 1\n\n\ndef g():\n  return 2\n",  # parts that see different indentation
])
def test_what_parts_cannot_join_is_parsed_whole(text: str, tiny_parts) -> None:
    source = text.encode("latin-1" if "latin-1" in text else "utf-8")
    assert split_parse.parse_in_parts(source, scan(source, "t.py").tree) is None
    module, error = engine.parse(source, "t.py")
    assert error is None and module.bytes == cst.parse_module(source).bytes


def test_every_fixture_parsed_in_parts_has_one_parse_s_code_and_diagnostics(monkeypatch) -> None:
    sources = [(str(path), path.read_bytes()) for path in SOURCES]
    whole = [check_source(source, path, ALL_RULES) for path, source in sources]
    for part_lines in (1, 4):
        monkeypatch.setattr(split_parse, "MIN_LINES", 0)
        monkeypatch.setattr(split_parse, "PART_LINES", part_lines)
        for (path, source), (reference, reference_errors) in zip(sources, whole):
            parts = split_parse.parse_in_parts(source, scan(source, path).tree)
            assert parts is not None and parts.bytes == source, path
            diagnostics, errors = check_source(source, path, ALL_RULES)
            assert [(d, d.fix, d.message) for d in diagnostics] == \
                [(d, d.fix, d.message) for d in reference] and errors == reference_errors, path
