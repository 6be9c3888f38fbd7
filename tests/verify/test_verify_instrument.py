"""The loop cap: which scope a finding's line gets, and that the rewrite moves no line."""
from __future__ import annotations

import textwrap

import pytest

from torchmemlint.verify.instrument import CONTROLLER, InstrumentError, IterationScope, find_iteration_scope, instrument

SOURCE = textwrap.dedent('''\
    import torch
    model.requires_grad = False
    for epoch in range(3):
        for x, y in loader:
            losses.append(loss)
    def evaluate():
        outputs = []
        while True:
            outputs.append(model(x))
    @torch.no_grad()
    def predict(x):
        """Docstring."""
        if x is None:
            return None
        return model(x)
    class Net(torch.nn.Module):
        def forward(self, x):
            self.last = x
            return x
    async def stream():
        async for x in source:
            keep(x)
    print("done")
''')


@pytest.mark.parametrize("line, expected", [
    (5, IterationScope("for", 1, 4)),  # the innermost loop
    (4, IterationScope("for", 0, 3)),  # an inner loop's header runs once per outer iteration
    (2, IterationScope("for", 1, 4)),  # setup before a loop: the step loop that follows
    (3, IterationScope("for", 1, 4)),
    (9, IterationScope("while", 0, 8)),
    (7, IterationScope("while", 0, 8)),  # setup inside a function: its loop that follows
    (10, IterationScope("function", 1, 11, "predict")),  # a decorator: the function's calls
    (14, IterationScope("function", 1, 11, "predict")),
    (18, IterationScope("function", 2, 17, "forward")),
])
def test_iteration_scope(line: int, expected: IterationScope) -> None:
    assert find_iteration_scope(SOURCE, line) == expected


@pytest.mark.parametrize("line, reason", [(22, "async for"), (23, "nothing repeats")])
def test_no_iteration_scope(line: int, reason: str) -> None:
    with pytest.raises(InstrumentError, match=reason):
        find_iteration_scope(SOURCE, line)


@pytest.mark.parametrize("line, header", [
    (5, "    for x, y in __torchmemlint_replay__.iterate(loader):"),
    (9, "    while __torchmemlint_replay__.check(True):"),
    (14, "    if __torchmemlint_replay__.enter(x is None):"),
    (18, "        __torchmemlint_replay__.enter(None); self.last = x"),
])
def test_instrument_changes_one_line(line: int, header: str) -> None:
    scope = find_iteration_scope(SOURCE, line)
    result = instrument(SOURCE, scope)
    before, after = SOURCE.splitlines(), result.splitlines()
    assert len(before) == len(after)
    changed = [number for number, (old, new) in enumerate(zip(before, after), 1) if old != new]
    assert len(changed) == 1
    assert after[changed[0] - 1] == header


def test_multiline_iterable_keeps_lines() -> None:
    source = "for x in zip(\n    a,\n    b,\n):\n    keep.append(x)\n"
    result = instrument(source, find_iteration_scope(source, 5))
    assert result == f"for x in {CONTROLLER}.iterate(zip(\n    a,\n    b,\n)):\n    keep.append(x)\n"


def test_twin_scope_found_after_lines_moved() -> None:
    """The fix may insert lines (``with torch.no_grad():``): the scope is found by its position
    among the loops, not by its line."""
    original = "model.eval()\nfor x in loader:\n    out.append(model(x))\n"
    twin = "model.eval()\nwith torch.no_grad():\n    for x in loader:\n        out.append(model(x))\n"
    scope = find_iteration_scope(original, 3)
    assert f"for x in {CONTROLLER}.iterate(loader):" in instrument(twin, scope)


def test_fix_that_removes_the_loop_is_reported() -> None:
    scope = find_iteration_scope("for x in y:\n    pass\n", 2)
    with pytest.raises(InstrumentError, match="no for scope"):
        instrument("pass\n", scope)


def test_syntax_error_is_reported() -> None:
    with pytest.raises(InstrumentError, match="cannot parse"):
        find_iteration_scope("for x in :\n", 1)
