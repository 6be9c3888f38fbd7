"""The loop cap: which scope a finding's line gets, and that the rewrite moves no line."""
from __future__ import annotations

import textwrap

import pytest

from torchmemlint.verify.instrument import (
    CONTROLLER, InstrumentError, IterationScope, calling_loop, find_iteration_scope, instrument, scope_of_span,
    statement_scope,
)

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


@pytest.mark.parametrize("kind, line, end_line, expected", [
    ("for", 4, 5, IterationScope("for", 1, 4)),  # the step loop, as the rule named it
    ("for", 3, 5, IterationScope("for", 0, 3)),  # the epoch loop
    ("while", 8, 9, IterationScope("while", 0, 8)),
    ("function", 10, 15, IterationScope("function", 1, 11, "predict")),  # a span from its decorator
    ("function", 11, 15, IterationScope("function", 1, 11, "predict")),  # or from `def`
])
def test_the_rules_span_is_the_scope(kind: str, line: int, end_line: int, expected: IterationScope) -> None:
    assert scope_of_span(SOURCE, kind, line, end_line) == expected


@pytest.mark.parametrize("kind, line, end_line, reason", [
    ("comprehension", 5, 5, "a `comprehension` iteration cannot be capped"),
    ("for", 6, 9, "no `for` scope at lines 6-9"),
    ("function", 6, 8, "no `function` scope at lines 6-8"),  # `evaluate` ends at line 9
])
def test_a_span_that_names_no_scope(kind: str, line: int, end_line: int, reason: str) -> None:
    with pytest.raises(InstrumentError, match=reason):
        scope_of_span(SOURCE, kind, line, end_line)


def test_a_one_shot_statement_is_bracketed_on_its_own_line() -> None:
    source = "import torch\nstate = torch.load(path)  # note\nprint(state)\n"
    scope = statement_scope(source, 2)
    assert scope == IterationScope("statement", 2, 2)
    capped = instrument(source, scope).splitlines()
    assert capped[1] == f"{CONTROLLER}.enter(None); state = torch.load(path); {CONTROLLER}.enter(None)  # note"
    assert capped[0] == "import torch" and capped[2] == "print(state)"
    with pytest.raises(InstrumentError, match="line 4 is not a simple statement"):
        statement_scope(SOURCE, 4)


HELPER_CALLED_PER_STEP = textwrap.dedent("""\
    def register(model, seen):
        model.register_forward_hook(lambda m, i, o: seen.append(o))

    def countdown(n):
        return n if n <= 0 else countdown(n - 1)

    def forward(x):
        return x

    for epoch in range(2):
        for step in range(10):
            register(model, seen)
            while countdown(step):
                pass
    """)


@pytest.mark.parametrize("name, expected", [
    # called by name in the step loop: each step is one iteration (the innermost loop around the call)
    ("register", IterationScope("for", 1, 11)),
    # its own recursive call does not count; a loop's header belongs to the loop around it
    ("countdown", IterationScope("for", 1, 11)),
    # never called by name (a module's forward, a framework's hook): each call stays one iteration
    ("forward", None),
])
def test_a_function_called_in_a_loop_is_replayed_per_iteration_of_that_loop(name: str, expected) -> None:
    index = ["register", "countdown", "forward"].index(name)
    line = {"register": 1, "countdown": 4, "forward": 7}[name]
    assert calling_loop(HELPER_CALLED_PER_STEP, IterationScope("function", index, line, name)) == expected


def test_a_loop_scope_has_no_calling_loop() -> None:
    assert calling_loop(HELPER_CALLED_PER_STEP, IterationScope("for", 0, 10)) is None


def test_a_cached_getitem_is_replayed_per_iteration_of_the_loop_that_reads_the_dataset() -> None:
    source = textwrap.dedent("""\
        class Samples:
            @lru_cache(maxsize=None)
            def __getitem__(self, index):
                return torch.randn(8)

        class Other:
            def __getitem__(self, index):
                return index

        samples, other = Samples(), Other()
        data = Samples()
        for step in range(10):
            batch = [data[step * 4 + i] for i in range(4)]
        for x in DataLoader(Other()):
            pass
        """)
    assert calling_loop(source, IterationScope("function", 0, 3, "__getitem__")) == IterationScope("for", 0, 12)
    # no instance of this class is subscripted in the file (a DataLoader reads it): per call
    assert calling_loop(source, IterationScope("function", 1, 7, "__getitem__")) is None
