"""TML018 autograd-function-ctx-tensor.

## What it does
Flags tensors stored as attributes of `ctx` (`ctx.out = out`, `ctx.weight = weight`,
`ctx.mask = x > 0`) in `forward` (or `setup_context`) of a custom `torch.autograd.Function`,
instead of being saved with `ctx.save_for_backward(...)`. Plain Python values on `ctx` — ints,
floats, flags, shapes (`ctx.shape = x.shape`), dtypes, `x.size(0)` — are fine and not flagged,
and so is a generator's state (`ctx.rng_state = torch.get_rng_state()`, kept to replay the
forward's randomness in backward), which is no activation, a detached alias of an output
(`ctx.out = out.detach()`: no `grad_fn`, so no cycle, and the output's own storage), zero-size
scratch tensors (`ctx.bufs = [x.new_empty(0), x.new_empty(0)]`), and what `setup_context`
unpacks from the outputs where `forward` returns no tensor (`return out, x.cpu().numpy()`). A helper of the same file is
followed both ways: what it returns (alone, in a tuple or a dict: `parts = split(x)`;
`ctx.keep = parts["keep"]`), and the arguments it uses as tensors (`ctx.rows = rows` after
`gather_rows(source, rows)` that calls `source.gather(dim, rows)`).

## Why is this bad?
`ctx` is the backward node of the Function's outputs. A forward *output* stored on it is a
reference cycle (output -> `grad_fn` -> `ctx` -> output) that reference counting cannot free:
it lives until Python's cycle collector runs. Measured: with the collector off, 10 outputs of
4 MiB stored as `ctx.y = y` all stayed alive after their backward passes; all 10 were freed
only by `gc.collect()`; with `ctx.save_for_backward(y)` none stayed alive. Other tensors on
`ctx` (inputs, intermediates) live as long as the graph instead of being released after
backward, and skip the in-place-modification check of saved tensors (silently wrong
gradients). PyTorch's documentation asks for `save_for_backward` for every tensor.

## Example
```python
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.y
```

## Use instead
```python
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y
```

## Fix safety
A fix exists only in the simple case: `forward` does not call `save_for_backward` yet, each
flagged store is a plain `ctx.name = variable` statement of `forward`'s own body whose variable
is not rebound afterwards, and `backward` only reads those attributes (nothing else touches
them, no `getattr` on `ctx`, no comments on the removed lines). The fix replaces the stores by one
`ctx.save_for_backward(...)` at the last of them and unpacks `ctx.saved_tensors` at the start of
`backward`. It is **unsafe**: saved tensors are checked for in-place changes (code that modifies
one after saving now raises instead of computing a silently wrong gradient) and are freed after
the first backward (a second backward without `retain_graph=True` now raises).

## Runtime signature
Stored outputs: a reference cycle per call, freed only when the cycle collector runs (memory
grows between collections). Other tensors: held as long as the graph, not freed at backward.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import replace_nodes
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.autograd import FUNCTION_BASES, CtxStore
from torchmemlint.semantics.imports import dotted_name

OUTPUT_MESSAGE = ("forward output stored on ctx: output -> grad_fn -> ctx -> output is a reference cycle freed only "
                  "by the garbage collector; use ctx.save_for_backward")


class AutogradFunctionCtxTensor(Rule):
    code = "TML018"
    name = "autograd-function-ctx-tensor"
    message = ("tensor stored as a ctx attribute in autograd.Function.forward; use ctx.save_for_backward "
               "(freed after backward, checked for in-place changes)")
    triggers = ("Function",)

    def could_match(self, facts: FileFacts) -> bool:
        # ``ctx.x = ...`` in ``forward``/``setup_context`` of a class that may derive from
        # ``torch.autograd.Function`` (directly, or through a class of this file).
        local_classes = {cls.name for cls in facts.classes}
        return super().could_match(facts) and any(
            cls.stores_on_ctx and any(base in local_classes or (facts.qualify(base) or base) in FUNCTION_BASES
                                      for base in cls.bases)
            for cls in facts.classes
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        autograd = model.autograd
        for cls in autograd.classes():
            stores = [s for s in autograd.ctx_stores(cls) if autograd.stores_tensor(s)
                      and not _holds_no_activation(s.value, autograd.output_names(s.method))]
            if not stores:
                continue
            fix = _save_for_backward_fix(model, cls, stores)
            outputs = autograd.output_names(stores[0].method)
            for store in stores:
                is_output = isinstance(store.value, cst.Name) and store.value.value in outputs
                yield Finding(store.assign, message=OUTPUT_MESSAGE if is_output else None, fix=fix)


# Factories whose only size argument ``0`` makes an empty tensor (``x.new_empty(0)``).
_FACTORIES = frozenset({"empty", "zeros", "ones", "new_empty", "new_zeros", "new_ones", "new_full", "full"})


def _holds_no_activation(value: cst.BaseExpression, outputs: set[str]) -> bool:
    """A detached alias of a forward output (no ``grad_fn``, so no cycle; the output's own
    storage) or zero-size scratch tensors (``[x.new_empty(0), x.new_empty(0)]``: no memory)."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return bool(value.elements) and all(_holds_no_activation(e.value, outputs) for e in value.elements)
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    if name == "detach" and isinstance(func, cst.Attribute):
        return isinstance(func.value, cst.Name) and func.value.value in outputs and not value.args
    positional = [a.value for a in value.args if a.keyword is None]
    return name in _FACTORIES and bool(positional) and \
        isinstance(positional[0], cst.Integer) and positional[0].value == "0"


def _save_for_backward_fix(model: SemanticModel, cls: cst.ClassDef, stores: list[CtxStore]) -> Optional[NodeFix]:
    autograd = model.autograd
    forward, backward = autograd.method(cls, "forward"), autograd.method(cls, "backward")
    if forward is None or backward is None or stores[0].method is not forward:
        return None
    backward_ctx = autograd.ctx_name(backward)
    if backward_ctx is None or _mentions(model, cls, ("save_for_backward", "saved_tensors", "getattr", "setattr",
                                                      "hasattr", "vars", "__dict__")):
        return None
    attributes = [s.attribute for s in stores]
    if len(set(attributes)) != len(attributes) or \
            not all(_simple_store(model, s, forward, removed=s is not stores[-1]) for s in stores):
        return None
    reads = _backward_reads(model, cls, stores, backward, backward_ctx)
    if reads is None or _names_in(model, backward) & set(attributes):
        return None
    values = [s.value for s in stores]
    save = cst.Expr(cst.Call(
        func=cst.Attribute(value=cst.Name(stores[0].ctx), attr=cst.Name("save_for_backward")),
        args=[cst.Arg(v, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for v in values[:-1]]
        + [cst.Arg(values[-1])],
    ))
    replacements: list[Replacement] = []
    for store in stores[:-1]:
        replacements.append(Replacement(model.tree.statement_of(store.assign), cst.RemovalSentinel.REMOVE))
    last_line = model.tree.statement_of(stores[-1].assign)
    replacements.append(Replacement(last_line, last_line.with_changes(body=[save])))
    targets = ", ".join(attributes) if len(attributes) > 1 else f"({attributes[0]},)"
    unpack = cst.parse_statement(f"{targets} = {backward_ctx}.saved_tensors\n")
    first = _first_body_statement(backward)
    if first is None:
        return None
    # A replaced node is rebuilt from the original, so reads inside ``first`` are replaced in it.
    inside_first = {read: cst.Name(read.attr.value) for read in reads if model.tree.contains(first, read)}
    first_rewritten = replace_nodes(first, inside_first)
    replacements += [Replacement(read, cst.Name(read.attr.value)) for read in reads if read not in inside_first]
    replacements.append(Replacement(first, cst.FlattenSentinel([unpack.with_changes(
        leading_lines=first.leading_lines), first_rewritten.with_changes(leading_lines=[])])))
    return NodeFix("save the tensors with ctx.save_for_backward", safe=False, replacements=replacements)


def _mentions(model: SemanticModel, cls: cst.ClassDef, names: tuple[str, ...]) -> bool:
    return any(n.value in names for n in model.tree.descendants(cls, cst.Name))


def _names_in(model: SemanticModel, func: cst.FunctionDef) -> set[str]:
    """Variable names used in ``func`` (not the ``attr`` of ``x.attr``)."""
    names = set()
    for name in model.tree.descendants(func, cst.Name):
        parent = model.tree.parent.get(name)
        if not (isinstance(parent, cst.Attribute) and parent.attr is name):
            names.add(name.value)
    return names


def _simple_store(model: SemanticModel, store: CtxStore, forward: cst.FunctionDef, removed: bool) -> bool:
    """``ctx.a = name`` as a whole statement of ``forward``'s own body (without comments if the
    fix removes it), with ``name`` not rebound after it (so saving it later saves the same
    tensor)."""
    line = model.tree.statement_of(store.assign)
    if not isinstance(store.value, cst.Name) or len(store.assign.targets) != 1:
        return False
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or \
            model.tree.parent.get(line) is not forward.body:
        return False
    if removed and (line.trailing_whitespace.comment is not None or any(e.comment for e in line.leading_lines)):
        return False
    later = [b for b in model.scopes.bindings(forward).get(store.value.value, []) if model.tree.before(line, b.node)]
    return not later


def _backward_reads(model: SemanticModel, cls: cst.ClassDef, stores: list[CtxStore], backward: cst.FunctionDef,
                    backward_ctx: str) -> Optional[list[cst.Attribute]]:
    """The ``ctx.<attr>`` reads in ``backward``, or None if the stored attributes are used
    anywhere else in the class (or written in ``backward``)."""
    attributes = {s.attribute for s in stores}
    store_targets = {id(t.target) for s in stores for t in s.assign.targets}
    reads = []
    for attribute in model.tree.descendants(cls, cst.Attribute):
        if attribute.attr.value not in attributes or not isinstance(attribute.value, cst.Name):
            continue
        if id(attribute) in store_targets:
            continue
        inside = model.tree.contains(backward, attribute) and dotted_name(attribute.value) == backward_ctx
        parent = model.tree.parent.get(attribute)
        written = isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.Del)) and \
            getattr(parent, "target", None) is attribute
        if not inside or written:
            return None
        reads.append(attribute)
    return reads


def _first_body_statement(func: cst.FunctionDef) -> Optional[cst.BaseStatement]:
    """The first statement of ``func`` after its docstring."""
    body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
    for index, statement in enumerate(body):
        is_docstring = index == 0 and isinstance(statement, cst.SimpleStatementLine) and \
            isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString)
        if not is_docstring:
            return statement
    return None
