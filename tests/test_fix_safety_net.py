"""The safety net around fixes (issue 16): an edit is applied only over the code it was made
for, changes nothing outside its finding, and reaches a fixed point in one round; otherwise that
fix is dropped ("fix skipped: unsafe edit") and the rest of the file is still fixed."""
import ast

import pytest

from torchmemlint.diagnostics import Edit, Fix
from torchmemlint.engine import check_source
from torchmemlint.fix import apply_fixes, fix_source
from torchmemlint.rules import ALL_RULES

# LibCST counts a whitespace-only line ending in a backslash into the next statement: it put
# ``optimizer.step()`` on line 7 where Python says 8, and the TML001 fix of line 9 then landed in
# line 8's text (``optimizer.stloss.item()...``), which parses.
BACKSLASH_LINE = (
    "import torch\n\n"
    "def train(model, loader, optimizer, losses):\n"
    "    for x in loader:\n"
    "        loss = model(x)\n"
    "        loss.backward()\n"
    "        \\\n"
    "        optimizer.step()\n"
    "        optimizer.zero_grad()\n"
    "        losses.append(loss)\n"
)
ENABLE_GRAD_STATEMENT = (  # TML014's with-block, then TML003 inside it: a decorator per round
    "import torch\n\n\n@torch.no_grad()\ndef evaluate(model, loader):\n    torch.enable_grad()\n"
    "    for x in loader:\n        model(x)\n"
)
NUMPY_AS_TORCH = "import numpy as torch\n\n\ndef evaluate(model, loader):\n    model.eval()\n" \
                 "    for x, y in loader:\n        out = model(x)\n"
CARRIED_TUPLE = (  # TML005's fix of a carried tuple emitted the same edit twice
    "import torch\nimport torch.nn as nn\n\n\ndef blend(a, b):\n    return 0.9 * a + 0.1 * b\n\n\n"
    "class Tracker(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.running_stats = (torch.zeros(3), torch.zeros(3))\n\n"
    "    def forward(self, x):\n        mean, var = x.mean(0), x.var(0)\n        m, v = self.running_stats\n"
    "        self.running_stats = (blend(m, mean), blend(v, var))\n        return x\n"
)


def test_lines_come_from_python_where_libcst_disagrees_and_the_fix_is_dropped():
    diagnostics, _ = check_source(BACKSLASH_LINE.encode(), "t.py", ALL_RULES)
    [kept] = [d for d in diagnostics if d.code == "TML001"]
    assert kept.line == 10 and kept.fix is None and "unsafe edit" in kept.no_fix
    result = fix_source(BACKSLASH_LINE.encode(), "t.py", ALL_RULES, unsafe=True)
    assert result.source == BACKSLASH_LINE.encode()


@pytest.mark.parametrize("source, code, why", [
    (ENABLE_GRAD_STATEMENT, "TML003", "its finding is still there after it"),
    (CARRIED_TUPLE, "TML005", "its edits overlap or repeat each other"),
])
def test_an_unsafe_fix_is_skipped_and_said_so(source, code, why):
    result = fix_source(source.encode(), "t.py", ALL_RULES, unsafe=True)
    assert f"{code} fix skipped: unsafe edit ({why})" in [e.message for e in result.errors]
    assert code in [d.code for d in result.remaining]
    ast.parse(result.source)
    again = fix_source(result.source, "t.py", ALL_RULES, unsafe=True)
    assert again.source == result.source  # converged: a second run changes nothing


def test_no_fix_names_torch_where_torch_is_another_module():
    """TML003 declines itself (the safety net's check of such edits stays a backstop)."""
    [finding] = check_source(NUMPY_AS_TORCH.encode(), "t.py", ALL_RULES)[0]
    assert (finding.code, finding.fix) == ("TML003", None) and "`torch` names something else" in finding.no_fix
    assert fix_source(NUMPY_AS_TORCH.encode(), "t.py", ALL_RULES, unsafe=True).source == NUMPY_AS_TORCH.encode()


def test_the_other_fixes_of_the_file_still_apply():
    source = ENABLE_GRAD_STATEMENT.encode()
    result = fix_source(source, "t.py", ALL_RULES, unsafe=True)
    assert b"    with torch.enable_grad():\n        for x in loader:\n            model(x)\n" in result.source
    assert result.source.count(b"@torch.no_grad()") == 1
    assert [d.code for d in result.applied] == ["TML014"]


def test_an_edit_over_other_text_than_its_node_is_refused():
    text = "a = loss\nb = 2\n"
    right = Fix("item", True, (Edit(1, 4, 1, 8, "loss.item()", original="loss"),))
    wrong = Fix("item", True, (Edit(2, 2, 2, 5, "loss.item()", original="loss"),))
    assert apply_fixes(text, [right, wrong]) == ("a = loss.item()\nb = 2\n", [right])


def test_a_fix_that_changes_code_outside_its_finding_is_dropped(monkeypatch):
    from torchmemlint import fix

    real_apply = fix._apply

    def also_elsewhere(text, fixes):  # a buggy fix: it also rewrites an unrelated statement
        new_text, placed, refused = real_apply(text, fixes)
        return new_text.replace("return losses", "return None"), placed, refused

    monkeypatch.setattr(fix, "_apply", also_elsewhere)
    source = ("def train(model, loader, optimizer, criterion):\n    losses = []\n    for x, y in loader:\n"
              "        optimizer.zero_grad()\n        loss = criterion(model(x), y)\n        loss.backward()\n"
              "        optimizer.step()\n        losses.append(loss)\n    return losses\n").encode()
    result = fix_source(source, "t.py", ALL_RULES, unsafe=True)
    assert result.source == source
    assert [e.message for e in result.errors] == ["TML001 fix skipped: unsafe edit (it changes code outside the finding)"]


def test_a_statement_repeated_on_the_next_line_is_fixed_in_one_run():
    # Found by bench/fuzz.py (a duplicated line): removing either copy is the same edit, so the
    # fix of the first looked like one leaving its own finding behind and was dropped.
    source = ("import torch\n\n\ndef train(model, loader, optimizer):\n    for x in loader:\n"
              "        optimizer.zero_grad()\n        loss = model(x)\n        loss.backward()\n"
              "        optimizer.step()\n        torch.cuda.empty_cache()\n        torch.cuda.empty_cache()\n").encode()
    first, second = check_source(source, "t.py", ALL_RULES)[0]
    assert first.fix.edits == second.fix.edits  # (the ambiguity itself)
    result = fix_source(source, "t.py", ALL_RULES, unsafe=True)
    assert b"empty_cache" not in result.source and result.errors == []
    assert fix_source(result.source, "t.py", ALL_RULES, unsafe=True).source == result.source
