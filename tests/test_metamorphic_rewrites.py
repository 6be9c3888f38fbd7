"""The rewrites of the metamorphic tests keep a program's meaning: a small pure-Python training
loop (no torch, so it runs here) computes the same result before and after each rewrite, and
shapes a rewrite cannot move without changing meaning are left alone."""
from __future__ import annotations

import contextlib
import io

import pytest

from metamorphic.rewrites import REWRITES, RewriteError, apply, markers, notebook_code

PROGRAM = '''\
import contextlib
import math
from collections import deque


def scale(values, factor):
    """Multiplies every value."""
    scaled = [value * factor for value in values]
    return scaled


def train(batches, lr=0.5):
    history = deque(maxlen=3)
    total = 0.0
    weight = 1.0
    for step, (x, y) in enumerate(batches):
        prediction = weight * x
        loss = (prediction - y) ** 2
        with contextlib.nullcontext():
            weight = weight - lr * 2 * (prediction - y) * x
        total += loss  # expect: TML001
        best = min(best, loss) if step else loss
        history.append(round(loss, 6))
    return total, weight, list(history), best


data = scale([1.0, 2.0, 3.0, 0.5], 0.1)
result = train(list(zip(data, [0.2, 0.1, 0.3, 0.05])))
count = 0
while count < 3:
    count += 1
print(result, count, math.floor(2.5))
'''

# The same loop without the conditionally read ``best``: every rewrite can move it.
SIMPLE_PROGRAM = PROGRAM.replace("        best = min(best, loss) if step else loss\n", "").replace(", best\n", "\n")


def _run(code: str) -> str:
    """What the program prints (module-level names may be renamed; its output may not change)."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, "<program>", "exec"), {"__name__": "program"})
    return output.getvalue()


@pytest.mark.parametrize("program", [PROGRAM, SIMPLE_PROGRAM], ids=["conditional_read", "simple"])
@pytest.mark.parametrize("rewrite", REWRITES, ids=lambda rewrite: rewrite.name)
def test_rewrite_keeps_result(rewrite, program) -> None:
    rewritten = apply(rewrite, program)
    assert rewritten is not None, f"{rewrite.name} should apply to the program"
    code = "\n".join(text for _, text in notebook_code(rewritten)) if rewrite.suffix == ".ipynb" else rewritten
    assert _run(code) == _run(program), f"--- {rewrite.name} changed the result of ---\n{rewritten}"
    assert markers(code) == markers(program)


@pytest.mark.parametrize("name", ["extract_loop_body", "extract_method", "return_tuple", "return_dict"])
def test_training_loop_is_moved(name) -> None:
    """In the simple program the rewrite moves the flagged loop's statements (not the other
    loop's) into the helper it places before ``train``."""
    rewritten = apply(next(r for r in REWRITES if r.name == name), SIMPLE_PROGRAM)
    assert "weight * x" in rewritten.split("def train")[0]


def test_conditionally_bound_loop_value_is_not_passed() -> None:
    """``best`` is read only from the second iteration on: a helper receiving it as an argument
    would fail on the first, so the loop body stays where it is."""
    extracted = apply(next(r for r in REWRITES if r.name == "extract_loop_body"), PROGRAM)
    assert "best" not in extracted.split("def train")[0]


@pytest.mark.parametrize("name", ["extract_loop_body", "extract_method"])
def test_loop_leaving_early_is_not_extracted(name) -> None:
    source = "def f(items):\n    for item in items:\n        if item:\n            break\n        print(item)\n"
    assert apply(next(r for r in REWRITES if r.name == name), source) is None


def test_rewrite_losing_a_marker_is_an_error() -> None:
    from metamorphic.rewrites import Rewrite

    dropping = Rewrite("drop_markers", lambda source: source.replace("# expect: TML001", ""))
    with pytest.raises(RewriteError, match="markers"):
        apply(dropping, PROGRAM)
