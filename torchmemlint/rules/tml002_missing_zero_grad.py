"""TML002 missing-zero-grad.

## What it does
Flags a loop that calls `.backward()` (also `scaler.scale(loss).backward()`,
`accelerator.backward(loss)`) and steps an optimizer (`optimizer.step()`, `scaler.step(optimizer)`)
with no gradient reset anywhere in the loop (`optimizer.zero_grad()`, `model.zero_grad()`,
`p.grad = None`, `p.grad.zero_()`).

## Why is this bad?
Gradients accumulate *in place* into `.grad`: each step applies the sum of all previous
gradients, so training silently goes wrong. Contrary to a popular myth this does **not** make
memory grow — the `.grad` buffers are allocated once. With `set_to_none=True` (the default of
`zero_grad()` since PyTorch 2.0) the buffers are freed between steps, so a reset also lowers the
peak of the next forward pass.

## Example
```python
optimizer.zero_grad()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```
Gradient accumulation that resets every few steps
(`if (i + 1) % accum == 0: optimizer.step(); optimizer.zero_grad()`) stays silent.

## Fix safety
Inserting `optimizer.zero_grad(set_to_none=True)` before the backward changes the updates the
program computes, so the fix is **unsafe** (`--unsafe-fixes`).

## Runtime signature
No memory growth: `verify` reports `not-reproduced` for growth. The cost is wrong gradients and,
without `set_to_none`, `.grad` buffers held through the next forward (a higher peak).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import split_leading_lines
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.scopes import Loop


class MissingZeroGrad(Rule):
    code = "TML002"
    name = "missing-zero-grad"
    message = "loop calls backward() and optimizer.step() but never resets gradients; they accumulate across steps"
    triggers = ("backward",)

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for loop in [*model.tree.nodes(cst.For), *model.tree.nodes(cst.While)]:
            calls = model.scopes.loop_body_nodes(loop, cst.Call)
            backwards = [c for c in calls if model.values.backward_roots(c) and _is_backward_call(c)]
            if not backwards:
                continue
            optimizer = next((o for o in map(_stepped_optimizer, calls) if o is not None), None)
            if optimizer is None or _resets_gradients(model, loop, calls):
                continue
            if _inner_loop_reports(model, loop):
                continue
            backward = backwards[0]
            yield Finding(backward, fix=_insert_zero_grad(model, backward, optimizer))


def _is_backward_call(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in ("backward", "manual_backward")


def _stepped_optimizer(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The optimizer a call steps: ``opt.step()`` or ``scaler.step(opt)``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
        return None
    receiver = dotted_name(func.value) or ""
    last = receiver.split(".")[-1].lower()
    if "scaler" in last and call.args:
        return call.args[0].value
    if "sched" in last:
        return None
    if "optim" in last or last in ("opt", "optimiser") or last.startswith("opt_") or last.endswith("_opt"):
        return func.value
    return None


def _resets_gradients(model: SemanticModel, loop: Loop, calls: list[cst.Call]) -> bool:
    for call in calls:
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
        if name in ("zero_grad", "zero_", "clear_grad", "set_to_none_", "zero_grad_"):
            return True
        if _calls_local_function_that_resets(model, func):
            return True
    for assign in model.scopes.loop_body_nodes(loop, cst.Assign):  # p.grad = None
        if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in assign.targets):
            return True
    # a nested loop ``for p in params: p.grad = None`` is in loop_body_nodes too; ``del p.grad``:
    return any(isinstance(d.target, cst.Attribute) and d.target.attr.value == "grad"
               for d in model.scopes.loop_body_nodes(loop, cst.Del))


def _calls_local_function_that_resets(model: SemanticModel, func: cst.BaseExpression) -> bool:
    """A helper of this file (``train_step(...)``, ``self.optimize()``) that resets gradients."""
    name = func.value if isinstance(func, cst.Name) else (
        func.attr.value if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" else None)
    for target in model.scopes.functions_by_name.get(name or "", []):
        for call in model.tree.descendants(target, cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "zero_grad":
                return True
    return False


def _inner_loop_reports(model: SemanticModel, loop: Loop) -> bool:
    """Report the innermost loop that has both calls, not every loop around it."""
    for inner in [*model.tree.descendants(loop.body, cst.For), *model.tree.descendants(loop.body, cst.While)]:
        calls = model.scopes.loop_body_nodes(inner, cst.Call)
        if any(_is_backward_call(c) for c in calls) and any(_stepped_optimizer(c) is not None for c in calls):
            return True
    return False


def _insert_zero_grad(model: SemanticModel, backward: cst.Call, optimizer: cst.BaseExpression) -> Optional[NodeFix]:
    statement = model.tree.statement_of(backward)
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    # Blank lines before the backward go before the reset; comments right above it describe
    # the backward and stay with it.
    before, attached = split_leading_lines(statement.leading_lines)
    reset = cst.SimpleStatementLine(
        body=[cst.Expr(cst.parse_expression(f"{model.code(optimizer)}.zero_grad(set_to_none=True)"))],
        leading_lines=before,
    )
    return NodeFix(
        "reset gradients before the backward pass",
        safe=False,
        replacements=[Replacement(statement, cst.FlattenSentinel([reset, statement.with_changes(leading_lines=attached)]))],
    )
