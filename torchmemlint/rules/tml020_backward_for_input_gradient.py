"""TML020 backward-for-input-gradient (off by default).

## What it does
Flags a `.backward()` whose only consumer is the gradient of an *input* — a tensor marked with
`x.requires_grad_()` / `requires_grad=True` and fed to a model — read as `x.grad` afterwards
(saliency maps, FGSM/PGD attacks, input attributions), while the model's parameters still
require grad: no optimizer step, no parameter gradient read and no gradient clipping follow in
the same iteration, and nothing in the file freezes parameters (`requires_grad_(False)`,
`p.requires_grad = False`). Backward calls that already pass `inputs=` are not flagged. The
input may be made a leaf by a helper of the file and handed back (`batch = prepare(x, y)`;
`x = batch["images"]`, or unpacked from a returned tuple).

Off by default: the waste is bounded (no growth), and select it with `--select TML020` when
tuning attack or attribution code.

## Why is this bad?
`backward()` accumulates a gradient into the `.grad` of *every* leaf in the graph, so each call
also computes the weight gradients of the whole model and allocates (or adds into)
parameter-sized `.grad` buffers that nobody reads — as much memory as the model again, plus the
work of the weight-gradient kernels. `torch.autograd.grad(loss, x)` or
`loss.backward(inputs=[x])` computes only what is needed.

## Example
```python
x = images.clone().requires_grad_(True)
loss = criterion(model(x), labels)
loss.backward()
saliency = x.grad.abs()
```

## Use instead
```python
loss.backward(inputs=[x])            # or: grad, = torch.autograd.grad(loss, x)
saliency = x.grad.abs()
```

## Fix safety
The fix adds `inputs=[...]` (the input tensors whose `.grad` is read) to the backward call:
`x.grad` is accumulated exactly as before and the parameters' `.grad` stay untouched. Code
elsewhere that reads the parameters' gradients after this backward would see them unchanged,
so the fix is **unsafe**. Backward calls with positional arguments (`accelerator.backward(loss)`)
get no fix.

## Runtime signature
No growth: parameter-sized `.grad` buffers are allocated and filled on every call (peak and
time), while only the input's gradient is used.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import add_keyword_argument
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.params import INPUT, RESET_METHODS


class BackwardForInputGradient(Rule):
    code = "TML020"
    name = "backward-for-input-gradient"
    message = ("backward() used only for an input's .grad while the model's parameters require grad: their .grad "
               "buffers are filled for nothing; use torch.autograd.grad(loss, x) or backward(inputs=[x])")
    default_enabled = False
    triggers = ("backward",)

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        if _freezes_parameters(model):
            return
        for call in model.tree.nodes(cst.Call):
            if not model.calls.backward_roots(call) or model.imports.qualify(call.func) == "torch.autograd.grad":
                continue
            if any(a.keyword is not None and a.keyword.value == "inputs" for a in call.args):
                continue
            region = _iteration_region(model, call)
            inputs = _input_gradients_read_after(model, call, region)
            if inputs and not _parameter_gradients_used(model, call):
                yield Finding(call, fix=_inputs_fix(model, call, inputs))


def _freezes_parameters(model: SemanticModel) -> bool:
    for call in model.tree.nodes(cst.Call):
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" and call.args and \
                isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False":
            return True
    return any(
        isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" and
        isinstance(a.value, cst.Name) and a.value.value == "False"
        for a in model.tree.nodes(cst.Assign) for t in a.targets
    )


def _iteration_region(model: SemanticModel, call: cst.Call) -> cst.CSTNode:
    loops = model.scopes.loops_around(call)
    if loops:
        return loops[0].body
    return model.scopes.scope_of(call)


def _input_gradients_read_after(model: SemanticModel, call: cst.Call, region: cst.CSTNode) -> list[str]:
    """Names of input leaves fed to a model whose ``.grad`` is read after ``call`` in ``region``."""
    names: list[str] = []
    for attribute in model.tree.descendants(region, cst.Attribute):
        if attribute.attr.value != "grad" or not isinstance(attribute.value, cst.Name) or \
                not model.tree.before(call, attribute) or model.scopes.function_of(attribute) is not \
                model.scopes.function_of(call):
            continue
        name = attribute.value.value
        if name not in names and model.params.leaf_kind(attribute.value, attribute) == INPUT and \
                _fed_to_model(model, name, call):
            names.append(name)
    return names


def _fed_to_model(model: SemanticModel, name: str, at: cst.CSTNode, depth: int = 0) -> bool:
    """``name`` appears in the arguments of a forward pass (not a loss function) in the scope, or
    is handed to a helper of the file that feeds it to one (``compute_loss(model, x + delta)``)."""
    for call in model.scopes.scope_nodes(model.scopes.scope_of(at), cst.Call):
        if model.calls.is_forward_pass(call) and not _is_loss(model, call):
            if any(_mentions(model, arg.value, name) for arg in call.args):
                return True
            continue
        callee = model.calls.callee(call) if depth < 2 else None
        if callee is None or not isinstance(callee.function, cst.FunctionDef):
            continue
        for param, given in model.calls.arguments(call, callee).items():
            if any(_mentions(model, expr, name) for expr, _ in given) and \
                    _fed_to_model(model, param, callee.function.body, depth + 1):
                return True
    return False


def _mentions(model: SemanticModel, expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name or \
        any(n.value == name for n in model.tree.descendants(expr, cst.Name))


def _is_loss(model: SemanticModel, call: cst.Call) -> bool:
    text = model.code(call.func).lower()
    return "loss" in text or "criterion" in text or (model.imports.qualify(call.func) or "").startswith(
        "torch.nn.functional.")


def _parameter_gradients_used(model: SemanticModel, backward: cst.Call) -> bool:
    """The parameters' gradients of ``backward`` are consumed: the first gradient event after it
    in its function (or, with none after it, from the top of its outermost loop) is an optimizer
    step, gradient clipping or a read of a non-input ``.grad`` — not a reset
    (``zero_grad()``, ``p.grad = None``) that throws them away. Micro-batch accumulation
    (backward in an inner loop, ``step()`` after it) is a consumer."""
    loops = model.scopes.loops_around(backward)
    events = sorted(_gradient_events(model, model.scopes.scope_of(backward), backward),
                    key=lambda e: model.tree.start[e[0]])
    following = [kind for node, kind in events if model.tree.before(backward, node)]
    if not following and loops:  # the next iteration of the outermost loop
        following = [kind for node, kind in events if model.tree.contains(loops[-1].body, node)]
    return bool(following) and following[0] == "consumer"


def _gradient_events(model: SemanticModel, region: cst.CSTNode, backward: cst.Call) -> Iterator[tuple[cst.CSTNode, str]]:
    """``(node, "consumer" | "reset")`` for what uses or discards parameter gradients."""
    function = model.scopes.function_of(backward)
    for call in model.tree.descendants(region, cst.Call):
        if model.scopes.function_of(call) is not function:
            continue
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name == "step" or "clip_grad" in name:
            yield call, "consumer"
        elif name in RESET_METHODS:
            yield call, "reset"
    for attribute in model.tree.descendants(region, cst.Attribute):
        if attribute.attr.value != "grad" or model.scopes.function_of(attribute) is not function or \
                model.params.leaf_kind(attribute.value, attribute) == INPUT:
            continue
        parent = model.tree.parent.get(attribute)
        assign = model.tree.parent.get(parent) if isinstance(parent, cst.AssignTarget) else None
        discarded = (isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Name) and
                     assign.value.value == "None") or (isinstance(parent, cst.Attribute) and parent.attr.value == "zero_")
        yield attribute, "reset" if discarded else "consumer"


def _inputs_fix(model: SemanticModel, call: cst.Call, inputs: list[str]) -> Optional[NodeFix]:
    is_function = model.imports.qualify(call.func) == "torch.autograd.backward"
    if not is_function and any(a.keyword is None for a in call.args):
        return None  # accelerator.backward(loss) / loss.backward(gradient)
    value = cst.List([cst.Element(cst.Name(n)) for n in inputs])
    fixed = add_keyword_argument(call, "inputs", value)
    return NodeFix(f"accumulate only into {', '.join(inputs)}.grad", safe=False,
                   replacements=[Replacement(call, fixed)])
