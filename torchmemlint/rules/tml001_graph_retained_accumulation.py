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
`.item()` for a scalar loss accumulated into a name that starts as a Python number is **safe**
when the total is only ever used as a number afterwards (formatted, compared, `float()`), and
**unsafe** when it escapes (returned, printed as is, stored): it becomes a Python float. A value
is known to be a scalar when it is `.backward()`-ed without a gradient argument, a full
reduction (`x.mean()`), a loss function without `reduction="none"`, or arithmetic of those with
Python numbers (`loss * x.size(0)`); anything else could make `.item()` raise.
Everywhere else — values stored in containers, values not known to be scalars — the fix appends
`.detach()`: the container still holds tensors (code that calls `.item()` on them or stacks them
keeps working), but code that backpropagates through them would change, so it is **unsafe**.

## Runtime signature
Live memory grows every iteration (`torchmemlint verify` reports `confirmed-growth`).
"""
from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import call_method, used_only_as_number
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.scopes import terminal_name
from torchmemlint.semantics.stores import Accumulation, Store


class GraphRetainedAccumulation(Rule):
    code = "TML001"
    name = "graph-retained-accumulation"
    message = "graph-attached value kept across iterations; store `.item()` or `.detach()` instead"
    triggers = ("append", "extend", "insert", "+=", "-=", "*=", "=", ".add(", "push", "put")

    def could_match(self, facts: FileFacts) -> bool:
        # ``_retains`` needs a store or accumulation in a step loop or a per-step method.
        return super().could_match(facts) and any(
            site.kind in ("call", "subscript", "list", "accumulation") and site.could_be_in_step_iteration
            for site in facts.sites
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for store in model.hidden_stores.with_visible(model.stores.stores()):
            if model.stores.never_grows(store):
                continue
            if self._retains(model, store.node, store.container, store.value) and \
                    not _kept_for_backward(model, store.node, store.container):
                yield Finding(store.value, fix=_store_fix(model, store))
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


def _store_fix(model: SemanticModel, store: Store) -> NodeFix:
    """``.item()`` for a scalar loss kept in a list whose elements are only ever used as numbers
    (logged, summed, averaged, plotted): the list then holds floats and nothing of the graph.
    ``.detach()`` where the elements are later used as tensors (``torch.stack(losses)``,
    ``l.item() for l in losses``). Both change what the container holds: unsafe."""
    if _is_scalar(model, store.value, store.node) and _elements_used_only_as_numbers(model, store.container):
        return _item_fix(store.value, safe=False)
    return _detach_fix(store.value)


def _elements_used_only_as_numbers(model: SemanticModel, container: cst.BaseExpression) -> bool:
    """The list is a local name that is not returned, never handed to a torch function, and
    whose elements (loop targets over it, subscripts of it) never have attributes used."""
    if not isinstance(container, cst.Name):
        return False
    name = container.value
    scope = model.scopes.scope_of(container)
    if any(ret.value is not None and name in _returned_names(ret.value)
           for ret in model.scopes.scope_nodes(scope, cst.Return)):
        return False  # the caller's use of the elements is not seen here
    for call in model.scopes.scope_nodes(scope, cst.Call):
        qualified = model.imports.qualify(call.func) or ""
        if qualified.startswith("torch.") and any(
                isinstance(a.value, cst.Name) and a.value.value == name for a in call.args):
            return False
    element_names = set()
    for iteration in [*model.scopes.scope_nodes(scope, cst.For), *model.scopes.scope_nodes(scope, cst.CompFor)]:
        if isinstance(iteration.iter, cst.Name) and iteration.iter.value == name:
            element_names.update(n.value for n in model.tree.descendants(iteration.target, cst.Name))
    for attribute in model.scopes.scope_nodes(scope, cst.Attribute):
        receiver = attribute.value
        if isinstance(receiver, cst.Subscript) and isinstance(receiver.value, cst.Name) and receiver.value.value == name:
            return False
        if isinstance(receiver, cst.Name) and receiver.value in element_names:
            return False
    return True


def _item_fix(value: cst.BaseExpression, safe: bool) -> NodeFix:
    return NodeFix("keep the Python number (`.item()`)", safe=safe,
                   replacements=[Replacement(value, call_method(value, "item"))])


def _accumulation_fix(model: SemanticModel, accumulation: Accumulation) -> NodeFix:
    """``.item()`` for a scalar accumulated into a name that starts as a Python number: safe when
    the total is only ever used as a number afterwards, unsafe when it escapes (returned, printed
    as is, stored); else ``.detach()`` (the accumulator may be a tensor on purpose)."""
    value = accumulation.value
    target = accumulation.target
    if isinstance(target, cst.Name) and _is_scalar(model, value, accumulation.node):
        scope = model.scopes.scope_of(accumulation.node)
        starts = [b for b in model.scopes.bindings(scope).get(target.value, [])
                  if not b.augmented and b.node is not accumulation.node]
        if starts and all(isinstance(b.value, (cst.Integer, cst.Float)) for b in starts):
            return _item_fix(value, safe=used_only_as_number(model, target.value, scope, exclude=accumulation.node))
    return _detach_fix(value)


# Reductions that give a 0-dim tensor when called without arguments.
_FULL_REDUCTIONS = frozenset({"sum", "mean", "norm", "prod", "std", "var", "max", "min"})
_MAX_SCALAR_DEPTH = 8


def _is_scalar(model: SemanticModel, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
    """Whether ``expr`` is known to be a one-element tensor (or a Python number), so that
    ``.item()`` cannot fail on it: a name that is ``.backward()``-ed without a gradient argument
    (PyTorch requires a scalar there), a full reduction (``x.mean()``), a loss function without
    ``reduction="none"``, or arithmetic of those with Python numbers."""
    depth += 1
    if depth > _MAX_SCALAR_DEPTH:
        return False
    if _is_python_number(model, expr, at, depth):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return (_is_scalar(model, expr.left, at, depth) and _is_scalar(model, expr.right, at, depth))
    if isinstance(expr, cst.UnaryOperation):
        return _is_scalar(model, expr.expression, at, depth)
    if isinstance(expr, cst.Name):
        if expr.value in _backwarded_without_gradient(model, model.scopes.scope_of(at)):
            return True
        bindings = model.scopes.reaching_bindings(expr.value, at)
        return bool(bindings) and all(
            b.value is not None and not b.augmented and _is_scalar(model, b.value, b.node, depth) for b in bindings
        )
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _FULL_REDUCTIONS and not expr.args:
            return True
        return _is_reduced_loss_call(model, expr)
    return False


def _is_python_number(model: SemanticModel, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
    """A literal, ``len(...)``, ``x.size(0)``, ``x.shape[0]``, ``x.item()``, ``float(...)``, or a
    name bound only to those."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name) and func.value in ("len", "float", "int"):
            return True
        if isinstance(func, cst.Attribute) and (func.attr.value in ("item", "numel", "dim") or
                                                (func.attr.value == "size" and expr.args)):
            return True
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and \
            expr.value.attr.value == "shape":
        return True
    if isinstance(expr, cst.Name) and depth < _MAX_SCALAR_DEPTH:
        bindings = model.scopes.reaching_bindings(expr.value, at)
        return bool(bindings) and all(
            b.value is not None and _is_python_number(model, b.value, b.node, depth + 1) for b in bindings
        )
    return False


def _backwarded_without_gradient(model: SemanticModel, scope: cst.CSTNode) -> set[str]:
    """Names ``n`` of ``n.backward()`` / ``scaler.scale(n).backward()`` calls with no gradient
    argument (PyTorch raises unless ``n`` has one element), and of ``accelerator.backward(n)`` /
    ``fabric.backward(n)`` / ``self.manual_backward(n)``, which call ``n.backward()``."""
    names = set()
    for call in model.scopes.scope_nodes(scope, cst.Call):
        func = call.func
        if not isinstance(func, cst.Attribute):
            continue
        receiver = func.value
        if func.attr.value == "manual_backward" or (
                func.attr.value == "backward" and _FRAMEWORK_RECEIVER.search(terminal_name(receiver) or "")):
            root = call.args[0].value if call.args and call.args[0].keyword is None else None
            rest = call.args[1:]
        elif func.attr.value == "backward":
            root, rest = receiver, call.args
            if isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and \
                    root.func.attr.value == "scale" and len(root.args) == 1:
                root = root.args[0].value
        else:
            continue
        if isinstance(root, cst.Name) and not any(a.keyword is None or a.keyword.value == "gradient" for a in rest):
            names.add(root.value)
    return names


_FRAMEWORK_RECEIVER = re.compile(r"accelerator|fabric", re.IGNORECASE)


def _is_reduced_loss_call(model: SemanticModel, call: cst.Call) -> bool:
    """``F.cross_entropy(...)`` or ``criterion(...)`` with ``criterion = nn.MSELoss()``, without
    ``reduction="none"`` (which returns one loss per element)."""
    qualified = model.imports.qualify(call.func)
    if qualified is None and isinstance(call.func, cst.Name):
        bindings = model.scopes.reaching_bindings(call.func.value, call)
        if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Call):
            return False
        constructor = bindings[0].value
        qualified = model.imports.qualify(constructor.func) or ""
        return qualified.startswith("torch.nn.") and qualified.endswith("Loss") and _reduces(constructor)
    if qualified is None or not qualified.startswith("torch.nn.functional."):
        return False
    return model.values.is_module_call(call) and _reduces(call)


def _reduces(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "reduction":
            return isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value in ("mean", "sum")
        if arg.keyword is not None and arg.keyword.value in ("reduce", "size_average"):
            return False  # the deprecated spellings: do not guess
    return True
