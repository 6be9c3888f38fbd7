"""Applying fixes to one file's bytes (``torchmemlint.fix``): byte-for-byte preservation of
everything outside the edits, the safety net, safe vs unsafe, overlaps, idempotence."""
from __future__ import annotations

from typing import Iterator

import libcst as cst
import pytest

from torchmemlint.diagnostics import Edit, Fix
from torchmemlint.engine import check_source
from torchmemlint.fix import apply_fixes, fix_source, unified_diff
from torchmemlint.rules import ALL_RULES
from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule

# One safe fix (TML001 .item() into a number) and one unsafe (TML001 on a list of outputs),
# around comments and formatting no formatter would keep.
TRAINING = (
    "import torch  # the framework\n"
    "\n"
    "total_loss = 0     # a Python number\n"
    "outputs = [ ]\n"
    "for x, y in loader:   # one epoch\n"
    "    out  =  model( x )\n"
    "    loss = criterion(out, y)\n"
    "    loss.backward( )\n"
    "    opt.step() ; opt.zero_grad()\n"
    "    total_loss += loss   # accumulate\n"
    "    outputs.append(out)\n"
)
SAFE_FIXED = TRAINING.replace("total_loss += loss ", "total_loss += loss.item() ")
ALL_FIXED = SAFE_FIXED.replace("outputs.append(out)", "outputs.append(out.detach().cpu())")


def fixed(text: str, unsafe: bool, newline: str = "\n", encoding: str = "utf-8") -> bytes:
    source = text.replace("\n", newline).encode(encoding)
    result = fix_source(source, "train.py", ALL_RULES, unsafe=unsafe)
    assert not result.error
    return result.source


def test_safe_fixes_only_by_default() -> None:
    assert fixed(TRAINING, unsafe=False) == SAFE_FIXED.encode()


def test_unsafe_fixes_with_unsafe() -> None:
    assert fixed(TRAINING, unsafe=True) == ALL_FIXED.encode()


@pytest.mark.parametrize("newline", ["\r\n", "\r"], ids=["crlf", "cr"])
def test_line_endings_are_kept(newline: str) -> None:
    assert fixed(TRAINING, True, newline) == ALL_FIXED.replace("\n", newline).encode()


def test_inserted_lines_use_the_file_line_ending() -> None:
    source = "for x, y in loader:\r\n    loss = criterion(model(x), y)\r\n    loss.backward()\r\n    opt.step()\r\n"
    result = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True)
    assert result.source == source.replace(
        "    loss.backward()", "    opt.zero_grad(set_to_none=True)\r\n    loss.backward()").encode()


def test_bom_is_kept() -> None:
    bom = b"\xef\xbb\xbf"
    result = fix_source(bom + TRAINING.replace("\n", "\r\n").encode(), "t.py", ALL_RULES, unsafe=True)
    assert result.source == bom + ALL_FIXED.replace("\n", "\r\n").encode()


def test_latin1_with_coding_cookie_is_kept() -> None:
    text = "# -*- coding: latin-1 -*-\n# café: naïve comment\n" + TRAINING + "print('résumé')\n"
    result = fixed(text, unsafe=True, encoding="latin-1")
    assert result == ("# -*- coding: latin-1 -*-\n# café: naïve comment\n" + ALL_FIXED +
                      "print('résumé')\n").encode("latin-1")


def test_fixing_is_idempotent_and_leaves_nothing_fixable() -> None:
    once = fix_source(TRAINING.encode(), "t.py", ALL_RULES, unsafe=True)
    twice = fix_source(once.source, "t.py", ALL_RULES, unsafe=True)
    assert twice.source == once.source
    assert twice.applied == []
    assert sorted(d.code for d in once.applied) == ["TML001", "TML001", "TML004"]
    assert once.remaining == []


def test_counts_applied_and_remaining() -> None:
    result = fix_source(TRAINING.encode(), "t.py", ALL_RULES, unsafe=False)
    assert [(d.line, d.code, d.fix.safe) for d in result.applied] == [(10, "TML001", True)]
    assert [(d.line, d.code, d.fix.safe) for d in result.remaining] == [(11, "TML001", False)]


def test_zero_grad_goes_between_blank_lines_and_the_comment_above_the_backward() -> None:
    source = ("for x, y in loader:\n    loss = criterion(model(x), y)\n\n    # backprop\n    loss.backward()\n"
              "    opt.step()\n")
    result = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True)
    assert result.source.decode() == source.replace(
        "\n\n    # backprop\n", "\n\n    opt.zero_grad(set_to_none=True)\n    # backprop\n")


def test_diagnostics_left_unfixed_are_remaining() -> None:
    # its fix is unsafe: the loop reads autograd state, which no_grad changes
    source = b"for x, y in val_loader:\n    model.eval()\n    out = model(x)\n    print(out.grad_fn)\n"
    result = fix_source(source, "t.py", ALL_RULES, unsafe=False)
    assert result.source == source
    assert [d.code for d in result.remaining] == ["TML003"]


def test_file_that_does_not_parse_is_an_error_and_untouched() -> None:
    source = b"def broken(:\n"
    result = fix_source(source, "t.py", ALL_RULES, unsafe=True)
    assert result.source == source
    assert result.error and result.errors and result.errors[0].path == "t.py"


# -- the safety net: a fix that produces bad code is never applied --------------------------

class _BadFixRule(Rule):
    """Flags every ``total += ...`` and "fixes" it into ``replacement`` code."""

    code = "TML999"
    name = "bad-fix"
    message = "test rule"

    def __init__(self, replacement: cst.BaseExpression) -> None:
        self.replacement = replacement

    def check(self, model) -> Iterator[Finding]:
        for aug in model.tree.nodes(cst.AugAssign):
            yield Finding(aug.value, fix=NodeFix("bad", safe=True,
                                                 replacements=[Replacement(aug.value, self.replacement)]))


@pytest.mark.parametrize("replacement, reason", [
    (cst.Name("def"), "break the file"),  # LibCST cannot parse the result
    # LibCST can parse it, CPython cannot (``ast``, which is asked first, says so)
    (cst.SimpleString('"\\N{no such character}"'), "break the file (syntax error"),
])
def test_fix_producing_bad_code_is_refused(replacement: cst.BaseExpression, reason: str) -> None:
    source = b"total = 0\nfor x in data:\n    total += x  # keep me\n"
    result = fix_source(source, "t.py", [_BadFixRule(replacement)], unsafe=True)
    assert result.source == source
    assert reason in result.error and "left unchanged" in result.error
    assert result.applied == []
    assert [d.code for d in result.remaining] == ["TML999"]
    assert [e.message for e in result.errors] == [result.error]


def test_fix_that_the_encoding_cannot_hold_is_refused() -> None:
    source = "# -*- coding: latin-1 -*-\ntotal = 0\nfor x in data:\n    total += x\n".encode("latin-1")
    result = fix_source(source, "t.py", [_BadFixRule(cst.SimpleString('"€"'))], unsafe=True)
    assert result.source == source
    assert "encoding" in result.error


# -- apply_fixes ---------------------------------------------------------------------------

def _insert(line: int, column: int, text: str) -> Fix:
    return Fix(text, True, (Edit(line, column, line, column, text),))


def _replace(line: int, column: int, end_column: int, text: str) -> Fix:
    return Fix(text, True, (Edit(line, column, line, end_column, text),))


def test_apply_fixes_skips_overlapping_fixes_and_reports_the_applied_ones() -> None:
    text = "abcdef\r\nghij\n"
    first = _replace(1, 1, 4, "X")         # bcd -> X
    overlapping = _replace(1, 3, 5, "Y")   # de overlaps bcd
    same_point = _insert(1, 1, "Z")        # an insertion where the first edit starts
    elsewhere = _replace(2, 0, 1, "G")
    new_text, applied = apply_fixes(text, [first, overlapping, same_point, elsewhere])
    assert new_text == "aXef\r\nGhij\n"
    assert applied == [first, elsewhere]


def test_overlapping_fixes_are_applied_over_several_rounds() -> None:
    # TML001 (.detach()) and TML004 (.cpu()) fix the same value: the second one applies to the
    # first one's result in a later round.
    source = (b"import torch\nouts = []\nfor x in loader:\n    out = model(x.cuda())\n"
              b"    out.sum().backward()\n    opt.step()\n    opt.zero_grad()\n    outs.append(out)\n")
    result = fix_source(source, "t.py", ALL_RULES, unsafe=True)
    assert result.source.endswith(b"    outs.append(out.detach().cpu())\n")
    assert [d.code for d in result.applied] == ["TML001", "TML004"]
    assert check_source(result.source, "t.py", ALL_RULES)[0] == []


def test_unified_diff() -> None:
    before = b"a\nb\nc"
    after = b"a\nB\nc"
    assert unified_diff("x.py", before, after) == (
        "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\\ No newline at end of file\n")
    assert unified_diff("x.py", before, before) == ""


# -- what the rules' fixes write -------------------------------------------------------------

EVAL_LOOP = "model.eval()\nfor x, y in val_loader:\n    out = model(x)\n"
WRAPPED = "model.eval()\nwith {}():\n    for x, y in val_loader:\n        out = model(x)\n"
EVAL_FUNCTION = "def validate(model, loader):\n    model.eval()\n    for x, y in loader:\n        out = model(x)\n"


@pytest.mark.parametrize("source, expected", [
    pytest.param("import torch as T\n\n" + EVAL_LOOP, "import torch as T\n\n" + WRAPPED.format("T.no_grad"),
                 id="alias"),
    pytest.param("from torch import no_grad\n" + EVAL_LOOP, "from torch import no_grad\n" + WRAPPED.format("no_grad"),
                 id="from-import"),
    pytest.param("import torch.nn as nn\n" + EVAL_LOOP,
                 "import torch\nimport torch.nn as nn\n" + WRAPPED.format("torch.no_grad"), id="only-torch-nn"),
    pytest.param('"""Doc."""\nfrom __future__ import annotations\n\n# evaluate\n' + EVAL_LOOP,
                 '"""Doc."""\nfrom __future__ import annotations\n\nimport torch\n\n# evaluate\n'
                 + WRAPPED.format("torch.no_grad"), id="no-import-after-docstring-and-future"),
    pytest.param('"""Doc."""\n' + EVAL_FUNCTION,
                 '"""Doc."""\nimport torch\n\n\n@torch.no_grad()\n' + EVAL_FUNCTION, id="first-statement-is-the-function"),
    pytest.param('import os\n\nif __name__ == "__main__":\n    model.eval()\n    for x in val_loader:\n        model(x)\n',
                 'import torch\nimport os\n\nif __name__ == "__main__":\n    model.eval()\n'
                 '    with torch.no_grad():\n        for x in val_loader:\n            model(x)\n', id="loop-in-main-block"),
    pytest.param("def validate(model, loader):\n    import torch as T\n" + EVAL_FUNCTION.split("\n", 1)[1],
                 "import torch\n\n\n@torch.no_grad()\ndef validate(model, loader):\n    import torch as T\n"
                 + EVAL_FUNCTION.split("\n", 1)[1], id="import-inside-the-decorated-function"),
    pytest.param("def main():\n    import torch\n    model.eval()\n    for x in val_loader:\n        model(x)\n",
                 "def main():\n    import torch\n    model.eval()\n    with torch.no_grad():\n        for x in val_loader:\n"
                 "            model(x)\n", id="import-in-the-same-function"),
])
def test_no_grad_fix_spells_torch_as_the_file_does(source: str, expected: str) -> None:
    result = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True)
    assert result.source.decode() == expected
    assert [d.code for d in result.applied] == ["TML003"]


LOOP = ("import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss({})\ntotal = 0\n"
        "for x, y in loader:\n    out = model(x)\n    loss = criterion(out, y)\n    {}\n    opt.step()\n"
        "    opt.zero_grad()\n    total += {}\nprint(f'{{total:.2f}}')\n")


@pytest.mark.parametrize("criterion_args, backward, added, expected, safe", [
    ("", "loss.backward()", "loss", "loss.item()", True),
    ("", "loss.backward()", "loss * x.size(0)", "(loss * x.size(0)).item()", True),
    ("", "loss.sum().backward()", "criterion(out, y)", "criterion(out, y).item()", True),
    ("reduction='sum'", "loss.sum().backward()", "criterion(out, y)", "criterion(out, y).item()", True),
    # not known to be one number: .item() could raise, so the value is detached instead
    ("reduction='none'", "loss.sum().backward()", "criterion(out, y)", "criterion(out, y).detach()", False),
    ("", "loss.backward()", "out", "out.detach()", False),
])
def test_accumulation_fix_uses_item_only_for_scalars(criterion_args, backward, added, expected, safe) -> None:
    source = LOOP.format(criterion_args, backward, added)
    diagnostics, _ = check_source(source.encode(), "t.py", ALL_RULES)
    [diagnostic] = [d for d in diagnostics if d.code == "TML001"]
    assert diagnostic.fix.safe is safe
    fixed_source = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True).source.decode()
    assert f"    total += {expected}\n" in fixed_source


def test_values_stored_in_a_list_stay_tensors() -> None:
    # ``.item()`` would break ``l.item() for l in losses`` (a runnable fixture showed it).
    source = ("import torch\nlosses = []\nfor x, y in loader:\n    loss = criterion(model(x), y)\n"
              "    loss.backward()\n    opt.step()\n    opt.zero_grad()\n    losses.append(loss)\n"
              "print(sum(l.item() for l in losses))\n")
    diagnostics, _ = check_source(source.encode(), "t.py", ALL_RULES)
    assert [(d.code, d.fix.safe) for d in diagnostics] == [("TML001", False)]
    fixed_source = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True).source.decode()
    assert "    losses.append(loss.detach())\n" in fixed_source


def test_noqa_lines_are_not_fixed() -> None:
    source = TRAINING.replace("total_loss += loss   # accumulate", "total_loss += loss   # noqa: TML001")
    result = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True)
    assert b"    total_loss += loss   # noqa: TML001\n" in result.source
    assert b"outputs.append(out.detach().cpu())" in result.source


def test_unified_diff_of_an_absolute_path_has_no_prefix() -> None:
    assert unified_diff("/src/x.py", b"a\n", b"b\n").startswith("--- /src/x.py\n+++ /src/x.py\n")
