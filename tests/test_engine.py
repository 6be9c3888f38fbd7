"""Engine behaviour that fixtures cannot show: ``# noqa`` handling, byte-exact fixing of files
with other line endings and encodings, and refusing a fix that would not parse."""
from __future__ import annotations

from typing import Iterator

import libcst as cst
import pytest

from torchmemlint.engine import check_source
from torchmemlint.fix import fix_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule

# An evaluation loop without no_grad that keeps its losses: line 8 has TML003 (the forward
# pass) and TML001 (the kept loss) at once, line 9 only TML001.
EVAL_LOOP = """\
import torch


def validate(model, val_loader, criterion):
    model.eval()
    losses = []
    for x, y in val_loader:
        losses.append(criterion(model(x), y)){comment8}
        losses.append(criterion(x, y)){comment9}
    return torch.stack(losses).mean().item()
"""


def codes_by_line(source: str, apply_noqa: bool = True) -> dict[int, set[str]]:
    diagnostics, errors = check_source(source.encode(), "eval.py", ALL_RULES, apply_noqa=apply_noqa)
    assert not errors
    found: dict[int, set[str]] = {}
    for diagnostic in diagnostics:
        found.setdefault(diagnostic.line, set()).add(diagnostic.code)
    return found


def test_without_noqa_both_lines_report():
    assert codes_by_line(EVAL_LOOP.format(comment8="", comment9="")) == {8: {"TML001", "TML003"}, 9: {"TML001"}}


@pytest.mark.parametrize("comment, left_on_line_8", [
    ("  # noqa", set()),
    ("  # NOQA", set()),
    ("  # noqa: TML001", {"TML003"}),
    ("  # noqa:TML001", {"TML003"}),
    ("  # noqa: TML003", {"TML001"}),
    ("  # noqa:TML002,TML001", {"TML003"}),
    ("  # noqa: TML002, TML003 -- evaluation on purpose", {"TML001"}),
    ("  # noqa: TML00", set()),  # a prefix, as flake8 matches it
    ("  # noqa: E501", {"TML001", "TML003"}),  # another tool's code suppresses nothing of ours
])
def test_noqa_suppresses_only_the_named_codes_on_its_line(comment, left_on_line_8):
    found = codes_by_line(EVAL_LOOP.format(comment8=comment, comment9=""))
    assert found.get(8, set()) == left_on_line_8
    assert found[9] == {"TML001"}  # the comment of line 8 does not reach line 9


def test_noqa_can_be_ignored():
    source = EVAL_LOOP.format(comment8="  # noqa", comment9="  # noqa: TML001")
    assert codes_by_line(source) == {}
    assert codes_by_line(source, apply_noqa=False) == {8: {"TML001", "TML003"}, 9: {"TML001"}}


# A training loop whose only finding is ``losses.append(loss)`` (fixed to ``loss.detach()``),
# with non-ASCII text in a docstring and a comment.
TRAIN_LOOP = '''\
import torch


def train(model, loader, optimizer, criterion):
    """Entraîne le modèle."""
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)  # perte « brute »
    return losses
'''


def _encoded(newline: str, bom: bool = False, cookie: str = "") -> bytes:
    text = (f"# -*- coding: {cookie} -*-\n" if cookie else "") + TRAIN_LOOP
    text = text.replace("\n", newline)
    data = text.encode(cookie or "utf-8")
    return b"\xef\xbb\xbf" + data if bom else data


@pytest.mark.parametrize("source", [
    _encoded("\n"),
    _encoded("\r\n"),
    _encoded("\r"),
    _encoded("\n", bom=True),
    _encoded("\r\n", bom=True),
    _encoded("\n", cookie="latin-1"),
    _encoded("\r\n", cookie="latin-1"),
], ids=["lf", "crlf", "cr", "bom", "bom-crlf", "latin-1", "latin-1-crlf"])
def test_fix_keeps_every_other_byte(source):
    result = fix_source(source, "train.py", ALL_RULES, unsafe=True)
    assert not result.error
    assert [d.code for d in result.applied] == ["TML001"]
    assert result.source == source.replace(b"losses.append(loss)", b"losses.append(loss.detach())")


def test_safe_fixes_leave_unsafe_ones_alone():
    source = _encoded("\r\n", bom=True)
    result = fix_source(source, "train.py", ALL_RULES, unsafe=False)
    assert result.source == source and not result.applied


class _BreakingRule(Rule):
    """Proposes a 'fix' whose output is not Python: ``losses.append(lambda)``."""

    code = "TML999"
    name = "breaking-fix"
    message = "test rule"

    def check(self, model) -> Iterator[Finding]:
        for call in model.tree.nodes(cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "append":
                value = call.args[0].value
                yield Finding(value, fix=NodeFix("break it", safe=True,
                                                 replacements=[Replacement(value, cst.Name("lambda"))]))


def test_a_fix_that_would_not_parse_is_refused():
    source = _encoded("\r\n", bom=True)
    result = fix_source(source, "train.py", [_BreakingRule()], unsafe=True)
    assert result.source == source
    assert "would break the file" in result.error
    assert not result.applied


# A function longer than ``engine._INNER_POSITIONS_LINES``: positions come from the statements of
# its blocks that hold findings, not from the whole function; they must be LibCST's own.
def _long_training_function(filler: str) -> str:
    chunks = ["import torch\n\n\ndef train(model, loader, optimizer, history):\n"]
    for index in range(40):
        chunks.append(
            f"    # epoch block {index}\n"
            f"    for batch in loader:\n"
            f"        optimizer.zero_grad()\n"
            f"        loss = model(batch).sum()\n"
            f"        loss.backward()\n{filler}"
            f"        optimizer.step()\n"
            f"        if batch is not None:\n"
            f"            history.append(loss{'' if index % 5 == 0 else '.item()'})\n"
        )
    return "".join(chunks)


@pytest.mark.parametrize("filler", ["", "        \\\n"], ids=["plain", "whitespace-backslash-line"])
def test_positions_in_a_long_function_are_those_of_the_whole_function(monkeypatch, filler):
    from torchmemlint import engine

    source = _long_training_function(filler).encode()
    inner = check_source(source, "long.py", ALL_RULES)
    monkeypatch.setattr(engine, "_INNER_POSITIONS_LINES", 10 ** 9)
    whole = check_source(source, "long.py", ALL_RULES)
    assert inner == whole
    assert len([d for d in inner[0] if d.code == "TML001"]) == 8
    if filler:  # LibCST's lines part from Python's: the whole function is generated, fixes dropped
        assert all(d.fix is None for d in inner[0] if d.code == "TML001")
    else:
        assert all(d.fix is not None and d.fix.edits for d in inner[0] if d.code == "TML001")


# A training step followed by an evaluation forward after ``model.eval()``: evaluation code in a
# training script (TML003), a behaviour check in a test file's test body or the ``_test_*`` body
# its tests share.
TRAIN_THEN_EVALUATE = """\
import torch


def {name}(model, optimizer, x):
    model.train()
    optimizer.zero_grad()
    model(x).sum().backward()
    optimizer.step()
    model.eval()
    return model(x)
"""


@pytest.mark.parametrize("path, name, codes", [
    ("train.py", "train_epoch", {"TML003"}),
    ("pkg/tests/testing_common.py", "_test_training_then_inference", set()),
    ("test_model.py", "test_training_then_inference", set()),
])
def test_test_bodies_in_test_files_are_not_evaluation_code(path, name, codes):
    diagnostics, errors = check_source(TRAIN_THEN_EVALUATE.format(name=name).encode(), path, ALL_RULES)
    assert not errors
    assert {d.code for d in diagnostics} == codes
