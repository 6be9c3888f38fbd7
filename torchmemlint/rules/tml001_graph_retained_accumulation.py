"""TML001 graph-retained-accumulation.

## What it does
Flags a graph-attached value (a loss, a model output, anything computed from them with grad
enabled) that is stored into a container that outlives the iteration (`losses.append(loss)`,
`self.history["loss"].append(loss)`, `metrics[step] = loss`) or accumulated into a name that
outlives it (`total_loss += loss`, `total = total + loss`), also through a helper object of the
same file whose method keeps its argument (`meter.update(loss)` where `update` does
`self.sum += val * n`). A fixed key (`last["loss"] = loss`) keeps only the newest value and
stays silent.

## Why is this bad?
A tensor with a `grad_fn` keeps its autograd graph alive. Stored across iterations, every step
adds one more graph: live memory grows by the storage the tensor views when `backward()` already
freed the graph's buffers (512 bytes per CUDA scalar, 4 bytes per float32 scalar on the CPU, but an
`mse_loss` 0-dim result views its whole B x C storage), and by *all saved activations* when
backward never ran (evaluation) — the classic "CUDA out of memory at epoch 37".

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss)
    total_loss += loss
```

## Use instead
```python
    losses.append(loss.item())
    total_loss += loss.item()
```
Intended gradient accumulation stays silent: `total = total + loss` followed by
`total.backward()`, or a summed loss that is returned to the caller.

## Fix safety
`.item()` for a scalar loss accumulated into a name that starts as a Python number is **safe**.
Everywhere else the fix appends `.detach()` (the value stays a tensor on its device), which is
**unsafe**: code that later backpropagates through the stored values would change.

## Runtime signature
Live memory grows every iteration (`torchmemlint verify` reports `confirmed-growth`).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import call_method, used_only_as_number
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.stores import Accumulation


class GraphRetainedAccumulation(Rule):
    code = "TML001"
    name = "graph-retained-accumulation"
    message = "graph-attached value kept across iterations; store `.item()` or `.detach()` instead"
    triggers = ("append", "extend", "insert", "+=", "-=", "*=", "=", ".add(", "push", "put")

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for store in model.hidden_stores.with_visible(model.stores.stores()):
            if store.overwrites_fixed_slot:
                continue
            if self._retains(model, store.node, store.container, store.value) and \
                    not _kept_for_backward(model, store.node, store.container):
                yield Finding(store.value, fix=_detach_fix(store.value))
        for accumulation in model.stores.accumulations():
            if self._retains(model, accumulation.node, accumulation.target, accumulation.value) and \
                    not _kept_for_backward(model, accumulation.node, accumulation.target, accumulation.value):
                yield Finding(accumulation.value, fix=_accumulation_fix(model, accumulation))

    @staticmethod
    def _retains(model: SemanticModel, node: cst.CSTNode, container: cst.BaseExpression,
                 value: cst.BaseExpression) -> bool:
        iteration = model.scopes.step_iteration(node)  # not a loop over layers inside one forward
        if iteration is None:
            return False
        if not model.stores.outlives(container, node, iteration):
            return False
        return model.values.is_attached(value, node)


def _kept_for_backward(model: SemanticModel, node: cst.CSTNode, container: cst.BaseExpression,
                       value: Optional[cst.BaseExpression] = None) -> bool:
    """Values kept to be differentiated later are intended: ``total = total + loss`` then
    ``total.backward()``, log-probabilities stacked into a REINFORCE loss, or a container
    returned to a caller that does the backward."""
    name = dotted_name(container) if not isinstance(container, cst.Subscript) else dotted_name(container.value)
    if name is None:
        return False
    scope = model.scopes.scope_of(node)
    if value is not None and any(
        n.value in model.values.backwarded_names(scope) for n in model.tree.descendants(value, cst.Name)
    ):
        return False  # the added loss is differentiated itself: the sum can only be a metric
    if name in model.values.names_feeding_backward(scope):
        return True
    returned = any(
        name in _returned_names(ret.value) for ret in model.scopes.scope_nodes(scope, cst.Return) if ret.value
    )
    # A loop that already runs its backward every step has no reason to hand graphs back.
    return returned and not _backward_in_iteration(model, node)


def _backward_in_iteration(model: SemanticModel, node: cst.CSTNode) -> bool:
    iteration = model.scopes.step_iteration(node)
    if iteration is None:
        return False
    body = iteration if isinstance(iteration, cst.FunctionDef) else iteration.body
    return any(model.values.backward_roots(call) for call in model.tree.descendants(body, cst.Call))


def _returned_names(value: cst.BaseExpression) -> set[str]:
    """``return total`` / ``return a, b`` / ``return {"loss": total}``: the names handed back."""
    if isinstance(value, (cst.Tuple, cst.List)):
        elements = [e.value for e in value.elements]
    elif isinstance(value, cst.Dict):
        elements = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    else:
        elements = [value]
    return {n for n in map(dotted_name, elements) if n is not None}


def _detach_fix(value: cst.BaseExpression) -> NodeFix:
    return NodeFix("store `.detach()`", safe=False, replacements=[Replacement(value, call_method(value, "detach"))])


def _accumulation_fix(model: SemanticModel, accumulation: Accumulation) -> Optional[NodeFix]:
    """``.item()`` when the accumulator starts as a Python number: safe when it is only ever
    used as a number afterwards, unsafe when it escapes (returned, printed as is, stored); else
    ``.detach()`` (the accumulator may be a tensor on purpose)."""
    value = accumulation.value
    target = accumulation.target
    if isinstance(target, cst.Name):
        scope = model.scopes.scope_of(accumulation.node)
        starts = [b for b in model.scopes.bindings(scope).get(target.value, [])
                  if not b.augmented and b.node is not accumulation.node]
        if starts and all(isinstance(b.value, (cst.Integer, cst.Float)) for b in starts):
            safe = used_only_as_number(model, target.value, scope, exclude=accumulation.node)
            description = "accumulate `.item()`" if safe else "accumulate `.item()` (the total becomes a Python float)"
            return NodeFix(description, safe=safe, replacements=[Replacement(value, call_method(value, "item"))])
    return _detach_fix(value)
