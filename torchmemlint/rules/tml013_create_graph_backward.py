"""TML013 create-graph-backward.

## What it does
Flags `.backward(create_graph=True)` (also `scaler.scale(loss).backward(create_graph=True)`,
`accelerator.backward(loss, create_graph=True)`, `torch.autograd.backward(..., create_graph=True)`)
and `p.grad = g` where `g` comes from `torch.autograd.grad(..., create_graph=True)`, when no
reset that drops the gradients' graph follows in the same training iteration:
`optimizer.zero_grad()` / `model.zero_grad()` (either `set_to_none` setting), `p.grad = None`,
`del p.grad` or `p.grad.detach_()` in the enclosing step loop, or in the function when there is
no loop (or in every caller of that function in the file). An input the step makes a leaf that
requires grad (`x = x.detach().requires_grad_(True)`, a gradient penalty's interpolates, a PINN's
collocation points) and whose `.grad` it reads after such a backward needs a reset of its own
(`x.grad = None`): `zero_grad()` resets parameters only, and the input's cycle outlives the step
(measured: 16 KiB per step for a 32 x 64 input, with `optimizer.zero_grad()` every step; 0 with
`x.grad = None`).

## Why is this bad?
With `create_graph=True` each parameter's `.grad` is itself a graph output, and that graph
reaches back to the parameter: a reference cycle between the parameter and its gradient, which
PyTorch warns about ("Using backward() with create_graph=True will create a reference cycle").
Without a reset, the next backward accumulates into the old `.grad` out of place, so every
step's graph stays linked to the previous one: measured on a 1M-parameter MLP (batch 256),
resident memory grew by 300 MiB over 30 steps, and by under 5 MiB with any of the resets above.
`p.grad.zero_()` is **not** such a reset: it zeroes the values but keeps the graph (memory still
grew by 188 MiB over 30 steps). Gradients stored with `p.grad = g` are replaced every step, so
they do not grow, but the last cycle keeps the parameters and the last graph alive for good:
building a new model each step leaked about 16 MiB per model.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward(create_graph=True)   # e.g. for a Hessian-vector product
    hvp = hessian_vector_product(model, v)
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward(create_graph=True)
    hvp = hessian_vector_product(model, v)
    optimizer.step()
```
or compute the gradients with `torch.autograd.grad(loss, params, create_graph=True)` and keep
them out of `.grad`.

## Fix safety
No fix. Where the reset belongs depends on when the code has finished with the gradients
(after `optimizer.step()`, after a Hessian-vector product reads them); a reset in the wrong
place silently zeroes gradients the code is about to use. When the loop also steps an optimizer
without any reset, TML002's fix inserts `zero_grad(set_to_none=True)`, which also breaks the
cycle.

## Runtime signature
Growth per iteration when backward accumulates into graph-carrying `.grad`s; a reference cycle
that outlives the loop when gradients are assigned.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.params import INPUT
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.scopes import LIGHTNING_BASE

ASSIGNED_MESSAGE = ("`.grad` assigned a gradient computed with create_graph=True and never reset to None: "
                    "parameter and gradient form a reference cycle")
INPUT_MESSAGE = ("backward(create_graph=True) fills `{leaf}.grad` with a graph that reaches back to `{leaf}`, and "
                 "nothing resets it: the input and its gradient form a reference cycle Python's collector cannot "
                 "free, one per step (an optimizer's `zero_grad()` resets parameters only); set `{leaf}.grad = None` "
                 "after reading it, or take the gradient with `torch.autograd.grad`")
MAX_CALLER_DEPTH = 4


class CreateGraphBackward(Rule):
    code = "TML013"
    name = "create-graph-backward"
    message = ("backward(create_graph=True) without resetting .grad to None afterwards: parameters and their "
               "grads form a reference cycle and memory grows every step")
    triggers = ("create_graph",)

    def could_match(self, facts: FileFacts) -> bool:
        # Both findings need a call with ``create_graph=True`` spelled out.
        return super().could_match(facts) and "create_graph" in facts.true_keywords

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for call in model.tree.nodes(cst.Call):
            if not _is_create_graph_backward(model, call):
                continue
            if not _reset_covers(model, call):
                yield Finding(call)
            elif (leaf := _input_leaf_kept(model, call)) is not None:
                yield Finding(call, message=INPUT_MESSAGE.format(leaf=leaf))
        for assign in model.tree.nodes(cst.Assign):
            if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in assign.targets) \
                    and _from_create_graph_grad(model, assign.value, assign) and not _reset_covers(model, assign):
                yield Finding(assign, message=ASSIGNED_MESSAGE)


def _create_graph(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "create_graph" and
               isinstance(a.value, cst.Name) and a.value.value == "True" for a in call.args)


def _is_create_graph_backward(model: SemanticModel, call: cst.Call) -> bool:
    """A backward pass that accumulates into ``.grad`` with ``create_graph=True`` (not
    ``torch.autograd.grad``, which returns the gradients instead)."""
    return _create_graph(call) and bool(model.calls.backward_roots(call)) and \
        model.imports.qualify(call.func) != "torch.autograd.grad"


def _from_create_graph_grad(model: SemanticModel, expr: Optional[cst.BaseExpression], at: cst.CSTNode,
                            depth: int = 4) -> bool:
    """``expr`` is (an element of) the result of ``torch.autograd.grad(..., create_graph=True)``."""
    if expr is None or depth == 0:
        return False
    if isinstance(expr, cst.Call):
        if model.imports.qualify(expr.func) == "torch.autograd.grad":
            return _create_graph(expr)
        return False
    if isinstance(expr, cst.Subscript):
        return _from_create_graph_grad(model, expr.value, at, depth - 1)
    if isinstance(expr, cst.Name):
        for binding in model.scopes.bindings_of(expr.value, at):
            node = binding.node
            if isinstance(node, cst.For):
                iterable = node.iter  # for p, g in zip(params, grads)
                sources = [a.value for a in iterable.args] if isinstance(iterable, cst.Call) else [iterable]
                if any(_from_create_graph_grad(model, s, node, depth - 1) for s in sources):
                    return True
            elif _from_create_graph_grad(model, binding.value, node, depth - 1):
                return True
    return False


def _reset_covers(model: SemanticModel, node: cst.CSTNode, depth: int = 0) -> bool:
    """A graph-dropping gradient reset runs in every iteration around ``node``: in an enclosing
    step loop, else in its function (or every in-file caller of it), else a framework that
    resets gradients itself calls the method."""
    step_loops = [loop for loop in model.scopes.loops_around(node) if model.scopes.is_step_loop(loop)]
    stepping = [loop for loop in step_loops if model.iterations.steps_optimizer(loop)]
    if stepping:  # (in the loop of optimizer steps: one ``zero_grad()`` per epoch leaves every step's cycle)
        return model.params.resets_in(stepping[0].body)
    if step_loops:
        return any(model.params.resets_in(loop.body) for loop in step_loops)
    func = model.scopes.function_of(node)
    if func is None:
        return model.params.resets_in(model.module)
    if model.params.resets_in(func) or _framework_resets(model, func):
        return True
    if depth >= MAX_CALLER_DEPTH:
        return False
    callers = model.calls.call_sites(func)
    return bool(callers) and all(_reset_covers(model, site, depth + 1) for site in callers)


def _input_leaf_kept(model: SemanticModel, call: cst.Call) -> Optional[str]:
    """An input leaf (``x = x.clone().requires_grad_(True)``, here or in a helper that returns it:
    ``Parameters.leaf_kind``) whose ``.grad`` the function reads after this backward, with no
    ``x.grad = None`` / ``del x.grad`` / ``x.grad.detach_()`` of its own: ``zero_grad()`` of an
    optimizer or a model never reaches it, so its cycle outlives the step (measured: 16 KiB per
    step for a 32 x 64 input, with ``optimizer.zero_grad()`` every step)."""
    func = model.scopes.function_of(call)
    if func is None:
        return None
    for read in model.scopes.scope_nodes(func, cst.Attribute):
        leaf = read.value
        if read.attr.value != "grad" or type(leaf) is not cst.Name or not model.tree.before(call, read) or \
                model.params.leaf_kind(leaf, read) != INPUT:
            continue
        if not any(model.params.breaks_grad_cycle(n) and _names_grad_of(n, leaf.value)
                   for node_type in (cst.Call, cst.Assign, cst.Del) for n in model.scopes.scope_nodes(func, node_type)):
            return leaf.value
    return None


def _names_grad_of(reset: cst.CSTNode, name: str) -> bool:
    """The reset is ``name.grad = None``, ``del name.grad`` or ``name.grad.detach_()``."""
    if isinstance(reset, cst.Call):
        target = reset.func.value if isinstance(reset.func, cst.Attribute) else None
    elif isinstance(reset, cst.Assign):
        target = next((t.target for t in reset.targets if isinstance(t.target, cst.Attribute)), None)
    else:
        target = reset.target
    return isinstance(target, cst.Attribute) and target.attr.value == "grad" and \
        isinstance(target.value, cst.Name) and target.value.value == name


def _framework_resets(model: SemanticModel, func: cst.FunctionDef) -> bool:
    """Lightning (automatic optimization) and HF ``Trainer`` zero the gradients every step."""
    cls = model.scopes.class_of(func)
    if cls is None:
        return False
    bases = model.scopes.class_bases(cls)
    if any(b.endswith("Trainer") for b in bases):
        return True
    if not any(b.endswith(LIGHTNING_BASE) for b in bases):
        return False
    return not any(  # self.automatic_optimization = False: the step method resets itself
        isinstance(t.target, cst.Attribute) and t.target.attr.value == "automatic_optimization"
        and isinstance(a.value, cst.Name) and a.value.value == "False"
        for a in model.tree.descendants(cls, cst.Assign) for t in a.targets
    )

