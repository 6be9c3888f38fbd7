"""TML015 param-update-outside-no-grad.

## What it does
Flags a manual, gradient-driven update of a leaf tensor that requires grad — a parameter
(`nn.Parameter`, a tensor created with `requires_grad=True`, the loop variable of
`for p in model.parameters()` or `group["params"]`) or an input marked for gradients — outside
a grad-disabled context:

- in place: `p -= lr * p.grad`, `p.add_(p.grad, alpha=-lr)`, `p.sub_(lr * g)` for `g` from
  `torch.autograd.grad(...)`, any in-place update inside a custom `Optimizer.step`;
- rebinding: `W = W - lr * W.grad` on a parameter;
- a moving average or soft update of one model's parameters from another's, in place
  (`ema_p.mul_(decay).add_(p, alpha=1 - decay)`, `target_p.copy_(tau * p + (1 - tau) * target_p)`
  over `zip(model.parameters(), target.parameters())`): it raises as a gradient step does where
  the target requires grad, and where the target is frozen it records each step's update onto
  the previous one's graph (the target's parameters become graph nodes chained over every step).

Updates through `.data` (`p.data -= ...`) and updates under `torch.no_grad()` (also in an
`Optimizer.step` decorated with `@torch.no_grad()`, or a helper only called under it) are fine.

## Why is this bad?
With autograd on, an in-place change of a leaf that requires grad raises
`RuntimeError: a leaf Variable that requires grad is being used in an in-place operation`.
The rebinding form runs, but records the update in the graph: `W` stops being a leaf, its
`.grad` is `None` after the next backward (a `TypeError` in the next update), and code that
keeps it training with `W.retain_grad()` links every step's graph to the previous one, so
memory and backward time grow with the number of steps.

## Example
```python
w = torch.randn(3, 1, requires_grad=True)
for x, y in loader:
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w -= lr * w.grad
    w.grad.zero_()
```

## Use instead
```python
    with torch.no_grad():
        w -= lr * w.grad
        w.grad.zero_()
```

## Fix safety
For in-place updates the fix wraps the update (with the gradient resets right after it, or the
whole `for p in model.parameters()` loop when that is all the loop does) in
`with torch.no_grad():`, adding `import torch` if needed. It changes what autograd records,
so it is **unsafe**. The rebinding form has no fix: under `no_grad` the new `W` would no longer
require grad and training would silently stop; whether it should be
`(W - lr * W.grad).detach().requires_grad_()` or an in-place update depends on the code.

## Runtime signature
In place: a `RuntimeError` at the first update. Rebinding: a graph chain through every step
(growth) or a `TypeError` on the second step. A soft update into frozen parameters: the target
grows its graph by two nodes per step (`mul_`, `add_`; measured on the CPU with
`nn.Linear(256, 256)`).
"""
from __future__ import annotations

from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Rule
from torchmemlint.rules.edits import torch_callable, wrap_in_with
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.params import (
    IN_PLACE_UPDATES, PARAMETER, could_be_optimizer_base, dotted_chain_methods, iterates_parameters,
)
from torchmemlint.semantics.prescreen import FileFacts

IN_PLACE_MESSAGE = ("in-place update of a leaf that requires grad outside `torch.no_grad()` raises RuntimeError; "
                    "wrap the update in `with torch.no_grad():`")
SOFT_UPDATE_MESSAGE = ("in-place update of a parameter from another model's parameters outside `torch.no_grad()`: "
                       "it raises RuntimeError where the parameter requires grad, and where it is frozen each "
                       "step's update is recorded onto the last one's graph; wrap the update in `with torch.no_grad():`")
REBIND_MESSAGE = ("`{target} = ...{target}.grad...` outside `torch.no_grad()` turns the parameter into a graph node: "
                  "its .grad is None next step and each step's graph links to the previous one")


class ParamUpdateOutsideNoGrad(Rule):
    code = "TML015"
    name = "param-update-outside-no-grad"
    message = "manual parameter update outside `torch.no_grad()`"
    triggers = (".grad", "-=", "+=", "*=", "/=", "%=", "**=", "//=", "@=",
                *sorted(f".{method}(" for method in IN_PLACE_UPDATES))

    def could_match(self, facts: FileFacts) -> bool:
        # Both findings need a gradient read (``.grad``, ``torch.autograd.grad``), unless the
        # update is in the ``step`` method of an optimizer class (``Parameters.in_optimizer_step``)
        # or reads another model's parameters.
        return super().could_match(facts) and (
            "grad" in facts.attributes or "torch.autograd.grad" in facts.aliases.values()
            or "parameters" in facts.attributes  # (a soft update: ``zip(net.parameters(), target.parameters())``)
            or any("step" in cls.methods and facts.could_derive(cls, could_be_optimizer_base) for cls in facts.classes)
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for update, target in _in_place_updates(model):
            if model.grad.is_disabled(update):
                continue
            statement = model.tree.statement_of(update)
            if model.params.leaf_kind(target, update) is None:
                continue
            if model.params.reads_gradient(statement, update) or model.params.in_optimizer_step(update):
                yield Finding(update, message=IN_PLACE_MESSAGE, fix=_wrap_in_no_grad(model, statement))
            elif _reads_another_parameter(model, statement, target):
                yield Finding(update, message=SOFT_UPDATE_MESSAGE, fix=_wrap_in_no_grad(model, statement))
        for assign in model.tree.nodes(cst.Assign):
            target = _rebound_parameter(model, assign)
            if target is not None:
                yield Finding(assign, message=REBIND_MESSAGE.format(target=model.code(target)))


def _in_place_updates(model: SemanticModel) -> Iterator[tuple[cst.CSTNode, cst.BaseExpression]]:
    """``(update node, updated tensor)`` for ``t -= ...`` and the first in-place method call on
    a tensor (``t.mul_(m).add_(g)`` reports ``t.mul_``)."""
    for aug in model.tree.nodes(cst.AugAssign):
        if isinstance(aug.target, (cst.Name, cst.Attribute)) and not isinstance(aug.operator, (
                cst.LeftShiftAssign, cst.RightShiftAssign, cst.BitOrAssign, cst.BitAndAssign, cst.BitXorAssign)):
            yield aug, aug.target
    for call in model.tree.nodes(cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in IN_PLACE_UPDATES:
            receiver = func.value
            if not (isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and
                    receiver.func.attr.value in IN_PLACE_UPDATES):
                yield call, receiver


def _reads_another_parameter(model: SemanticModel, statement: Optional[cst.BaseStatement],
                             target: cst.BaseExpression) -> bool:
    """A moving average or soft update of one model's parameters from another's
    (``ema_p.mul_(decay).add_(p, alpha=1 - decay)``, ``target_p.copy_(tau * p + (1 - tau) * target_p)``):
    with grad on it raises as a gradient step does, or, with the target frozen, chains every
    step's update into its graph."""
    if statement is None:
        return False
    updated = dotted_name(target)
    read = set(model.calls.names_keeping_graph(statement))  # (not ``p.detach()``, ``p.data``)
    return any(node.value != updated and node.value in read and model.params.leaf_kind(node, node) is not None
               for node in model.tree.descendants(statement, cst.Name))


def _rebound_parameter(model: SemanticModel, assign: cst.Assign) -> Optional[cst.BaseExpression]:
    """The parameter ``T`` of ``T = <graph-attached expression of T and T.grad>``."""
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    spelled = dotted_name(target)
    if spelled is None or model.grad.is_disabled(assign):
        return None
    value = assign.value
    uses = [a for a in model.tree.descendants(value, cst.Attribute) if dotted_name(a) == f"{spelled}.grad"]
    if not uses or "detach" in dotted_chain_methods(value) or model.params.created_leaf(value) is not None:
        return None
    if not _reads_value_of(model, value, spelled):
        return None
    return target if model.params.leaf_kind(target, assign) == PARAMETER else None


def _reads_value_of(model: SemanticModel, value: cst.BaseExpression, spelled: str) -> bool:
    """``value`` uses the tensor ``spelled`` itself, not only its ``.grad``/``.data``/``.detach()``."""
    for node in (*model.tree.descendants(value, cst.Name), *model.tree.descendants(value, cst.Attribute)):
        if dotted_name(node) != spelled:
            continue
        parent = model.tree.parent.get(node)
        if isinstance(parent, cst.Attribute) and parent.attr.value in ("grad", "data", "detach", "shape", "size"):
            continue
        return True
    return False


def _wrap_in_no_grad(model: SemanticModel, statement: Optional[cst.BaseStatement]) -> Optional[NodeFix]:
    block = model.tree.parent.get(statement) if statement is not None else None
    if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    run = _update_run(model, block, statement)
    loop = model.tree.parent.get(block)
    if isinstance(loop, cst.For) and len(run) == len(block.body) and isinstance(loop.target, cst.Name) and \
            iterates_parameters(loop, loop.target.value):
        run = [loop]  # the loop only updates parameters: wrap the whole loop
    no_grad = torch_callable(model, "torch.no_grad", avoid=run)
    if no_grad is None:
        return None
    item, import_replacements = no_grad
    return NodeFix(f"wrap the update in `with {model.code(item)}:`", safe=False,
                   replacements=[*wrap_in_with(item, run), *import_replacements])


def _update_run(model: SemanticModel, block: Union[cst.IndentedBlock, cst.Module],
                statement: cst.SimpleStatementLine) -> list[cst.BaseStatement]:
    """The consecutive statements around ``statement`` that update leaves or reset their
    gradients (``w -= lr * w.grad; b -= lr * b.grad; w.grad.zero_()``), so one ``with`` covers
    them all."""
    body = list(block.body)
    index = body.index(statement)
    start, end = index, index + 1
    while start > 0 and _is_update_statement(model, body[start - 1]):
        start -= 1
    while end < len(body) and _is_update_statement(model, body[end]):
        end += 1
    return body[start:end]


def _is_update_statement(model: SemanticModel, statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.AugAssign):
        return model.params.leaf_kind(small.target, small) is not None
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        if isinstance(func, cst.Attribute) and func.attr.value in IN_PLACE_UPDATES:
            receiver = func.value
            while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
                receiver = receiver.func.value
            return (isinstance(receiver, cst.Attribute) and receiver.attr.value in ("grad", "data")) or \
                model.params.leaf_kind(receiver, small) is not None
    if isinstance(small, cst.Assign):  # w.grad = None
        return all(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in small.targets)
    return False
