"""TML008 concat-accumulator-in-loop.

## What it does
Flags an accumulator grown by concatenation inside a loop — `acc = torch.cat([acc, x])`, also
`torch.stack`, `vstack`, `hstack`, `dstack`, `column_stack`, `concat`/`concatenate`,
`torch.cat((acc, x), dim=1)`, and the `acc = x if acc is None else torch.cat([acc, x])` form — or
across steps in a per-step method (`self.preds = torch.cat([self.preds, preds])`), also into a slot
of a dict (`self.columns[key] = torch.cat([self.columns[key], scores])`).

## Why is this bad?
`torch.cat` allocates a new tensor and copies both inputs every time: after n iterations it has
copied O(n²) elements, and each step briefly holds the old and the new accumulator (a peak of
twice its size). When the pieces are graph-attached, the accumulator also keeps every step's
graph alive.

Only loops over data, steps or epochs (or that run a backward pass or an optimizer step), or
over the chunks of a tensor (`for begin in range(0, x.shape[0], chunk_size)`), are reported: a
short loop over a batch's items, a few classes or a module's layers copies little. A queue on
`self` that a method of its class cuts back to a slice of itself (`self.memory =
self.memory[:, :memory_len]`) has a bounded length and stays silent too, as does one grown only
below a size (`elif samples.size(0) < 10:`). Loops that use the
accumulator as their working input (autoregressive decoding feeds
`tokens = torch.cat([tokens, next_token], 1)` back to the model; DenseNet blocks concatenate
features they read) stay silent, and so does one `torch.cat(chunks)` after the loop.

## Example
```python
all_logits = torch.empty(0, num_classes)
for x, _ in loader:
    all_logits = torch.cat([all_logits, model(x).cpu()])
```

## Use instead
```python
all_logits = [torch.empty(0, num_classes)]
for x, _ in loader:
    all_logits.append(model(x).cpu())
all_logits = torch.cat(all_logits)
```

## Fix safety
In the simple case — a local accumulator initialised in the same block as the loop, grown at one
place by appending, read nowhere else in the loop — the fix rewrites it to a list that keeps the
initial value as its first piece (so dtype promotion and the result are the same, also for a loop
that runs zero times), appends inside the loop and concatenates once after it; the `None`-guarded
form becomes `torch.cat(acc) if acc else None`. It is **unsafe**: during the loop the name holds a
list, which code reading it elsewhere (a function using the global, an exception handler) would
see. `torch.stack` (which adds a dimension at every step) and prepending (`[x, acc]`) get no fix.

## Runtime signature
Time per step grows linearly with the number of iterations (quadratic in total); the peak is
twice the accumulator's size every step.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.prescreen import JOIN
from torchmemlint.semantics.scopes import Loop, accumulator_name, carried_name, measured_tensor
from torchmemlint.semantics.stores import JoinAccumulation
from torchmemlint.semantics.vocabulary import ASSOCIATIVE_JOINS

# Reads that inspect an accumulator without using its contents.
_METADATA = frozenset({"shape", "size", "numel", "dim", "device", "dtype", "ndim"})


class ConcatAccumulatorInLoop(Rule):
    code = "TML008"
    name = "concat-accumulator-in-loop"
    message = "tensor grown by concatenation in a loop: every iteration copies the whole accumulator (quadratic time, twice its size at peak); append to a list and concatenate once after the loop"
    triggers = ("cat", "stack", "concat")

    needs_steps = True
    keeping = frozenset({JOIN})

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for accumulation in model.stores.join_accumulations:
            iteration = model.scopes.iteration_scope(accumulation.site)
            if iteration is None:
                # A helper a step loop calls: ``self.acc = cat(...)`` in a method run per step,
                # or ``acc`` handed in and returned (``acc = loop_body(x, acc)``).
                func = model.scopes.function_of(accumulation.site)
                if func is None or not model.iterations.runs_per_step(func):
                    continue
                iteration = func
            if isinstance(iteration, cst.FunctionDef):
                if not accumulation.name.startswith("self.") and not model.iterations.fed_back(iteration, accumulation.name):
                    continue  # a per-step method's locals die with the call
            elif not (model.scopes.is_step_loop(iteration) or model.scopes.chunks_a_tensor(iteration)
                      or model.scopes.indexes_a_dataset(iteration)) or \
                    not model.loop_carried.reaches_previous(accumulation.site, accumulation.name, iteration):
                continue
            if _used_in_iteration(model, accumulation, iteration) or _truncated(model, accumulation) or \
                    _grown_only_below_a_size(model, accumulation, iteration):
                continue
            message = self.message
            if model.flow.value(accumulation.piece, accumulation.site).graph:
                message += "; the pieces are graph-attached, so every step's graph is kept as well"
            fix = _list_fix(model, accumulation, iteration) if not isinstance(iteration, cst.FunctionDef) else None
            yield Finding(accumulation.site, message=message, fix=fix)


def _mentions(model: SemanticModel, region: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    nodes: list[cst.BaseExpression] = []
    node_type = cst.Subscript if name.endswith("]") else cst.Attribute if name.startswith("self.") else cst.Name
    for node in model.tree.descendants(region, node_type):
        if accumulator_name(node) == name:
            nodes.append(node)
    return nodes


def _grown_only_below_a_size(model: SemanticModel, accumulation: JoinAccumulation, iteration: cst.CSTNode) -> bool:
    """Grown under ``if acc.size(0) < 10:`` (``len(acc) <``, ``acc.shape[0] <=``, or the size of
    another accumulator grown in the same branch): a few samples kept, not one piece per step."""
    for ancestor in model.tree.ancestors(accumulation.site):
        if ancestor is iteration:
            return False
        test = ancestor.test if isinstance(ancestor, cst.If) else None
        if isinstance(test, cst.Comparison) and \
                isinstance(test.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual)) and \
                _measured(test.left) in _grown_in(model, ancestor.body):
            return True  # (``if acc["imgs"].size(0) < 10:`` bounds ``acc["masked"]`` grown beside it too)
    return False


def _grown_in(model: SemanticModel, block: cst.CSTNode) -> set[str]:
    return {a.name for a in model.stores.join_accumulations if model.tree.contains(block, a.site)}


def _measured(expr: cst.BaseExpression) -> Optional[str]:
    """The accumulator whose size ``expr`` reads: ``acc.size(0)``, ``acc.shape[0]``, ``len(acc)``."""
    if isinstance(expr, cst.Call) and dotted_name(expr.func) == "len" and expr.args:
        return accumulator_name(expr.args[0].value)
    sized = measured_tensor(expr, methods=("size", "numel"))
    return accumulator_name(sized) if sized is not None else None


def _used_in_iteration(model: SemanticModel, accumulation: JoinAccumulation, iteration: cst.CSTNode) -> bool:
    """The accumulator is read in the iteration other than to grow it (a working buffer), or
    only inspected (``is None``, ``.shape``, ``len()``)."""
    region = iteration if isinstance(iteration, cst.FunctionDef) else iteration.body
    for node in _mentions(model, region, accumulation.name):
        if model.tree.contains(accumulation.site, node) or _is_assignment_target(model, node) or \
                _updates_itself(model, node, accumulation.name):
            continue
        if isinstance(iteration, cst.FunctionDef) and any(isinstance(a, (cst.Param, cst.Return))
                                                          for a in model.tree.ancestors(node)):
            continue  # handed in and handed back: the caller's loop carries it
        parent = model.tree.parent.get(node)
        if isinstance(parent, cst.Attribute) and parent.attr.value in _METADATA:
            continue
        if isinstance(parent, cst.Comparison) and all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in parent.comparisons):
            continue
        call = model.tree.parent.get(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(call, cst.Call) and dotted_name(call.func) in ("len", "isinstance"):
            continue
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                call.func.attr.value in ("to", "type_as", "new_tensor", "new_zeros", "new_empty"):
            continue  # ``y.to(self.preds)``: its dtype and device, not its data
        return True
    return False


def _truncated(model: SemanticModel, accumulation: JoinAccumulation) -> bool:
    """A ``self`` accumulator that a method of its class cuts back to a slice of itself
    (``self.memory = self.memory[:, :memory_len]``, also in the growing statement itself): a
    queue of bounded length, not one that grows."""
    if not accumulation.name.startswith("self."):
        return False
    cls = model.scopes.self_class(model.scopes.function_of(accumulation.site))
    if cls is None:
        return False
    for assign in model.tree.descendants(cls, cst.Assign):
        if not any(carried_name(t.target) == accumulation.name for t in assign.targets):
            continue
        for subscript in model.tree.descendants(assign.value, cst.Subscript):
            if carried_name(subscript.value) == accumulation.name and \
                    any(isinstance(element.slice, cst.Slice) for element in subscript.slice):
                return True
    return False


def _updates_itself(model: SemanticModel, node: cst.CSTNode, name: str) -> bool:
    """``acc = acc + x.sum()`` (another branch's running total of the same state): a read that
    only feeds the accumulator itself, not a use of its contents."""
    statement = model.tree.parent.get(model.tree.parent.get(node))
    total = model.tree.parent.get(node)
    return isinstance(total, cst.BinaryOperation) and isinstance(statement, cst.Assign) and \
        statement.value is total and any(accumulator_name(t.target) == name for t in statement.targets)


def _is_assignment_target(model: SemanticModel, node: cst.CSTNode) -> bool:
    return any(isinstance(a, cst.AssignTarget) for a in model.tree.ancestors(node))


def _list_fix(model: SemanticModel, accumulation: JoinAccumulation, loop: Loop) -> Optional[NodeFix]:
    """Rewrite to a list in the simple case (see "Fix safety"), else no fix."""
    if accumulation.prepends or accumulation.qualified not in ASSOCIATIVE_JOINS or \
            not isinstance(accumulation.target, cst.Name):
        return None
    name = accumulation.name
    site_line = model.tree.parent.get(accumulation.site)
    if not isinstance(site_line, cst.SimpleStatementLine) or len(site_line.body) != 1:
        return None
    initial = _initialisation(model, accumulation, loop)
    if initial is None:
        return None
    init_line, outer = initial
    init_value = init_line.body[0].value
    join = model.code(accumulation.join.func)
    rest = "".join(f", {model.code(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip()}"
                   for a in accumulation.join.args[1:])
    if accumulation.guard is not None:
        if not (isinstance(init_value, cst.Name) and init_value.value == "None") or \
                not _guard_selects_piece(model, accumulation):
            return None
        new_init, after = "[]", f"{name} = {join}({name}{rest}) if {name} else None\n"
    else:
        new_init, after = f"[{model.code(init_value)}]", f"{name} = {join}({name}{rest})\n"
    append = cst.parse_expression(f"{name}.append({model.code(accumulation.piece)})")
    new_site_line = site_line.with_changes(body=[cst.Expr(append)])
    new_outer = outer.deep_replace(site_line, new_site_line)
    return NodeFix(
        "append to a list and concatenate once after the loop", safe=False,
        replacements=[
            Replacement(init_line, init_line.with_changes(
                body=[init_line.body[0].with_changes(value=cst.parse_expression(new_init))])),
            Replacement(outer, cst.FlattenSentinel([new_outer, cst.parse_statement(after)])),
        ],
    )


def _initialisation(model: SemanticModel, accumulation: JoinAccumulation, loop: Loop):
    """``(init_line, outer)``: the one assignment that starts the accumulator, in the same
    block as ``outer`` (the loop, or the statement around it), with the name used nowhere between
    them nor in ``outer`` outside the growing line; else None."""
    name = accumulation.name
    bindings = model.scopes.reaching_bindings(name, loop)
    if len(bindings) != 1 or not isinstance(bindings[0].node, cst.Assign) or len(bindings[0].node.targets) != 1:
        return None
    init = bindings[0].node
    init_line = model.tree.parent.get(init)
    block = model.tree.parent.get(init_line)
    if not isinstance(init_line, cst.SimpleStatementLine) or len(init_line.body) != 1 or \
            not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    outer: cst.CSTNode = loop
    while model.tree.parent.get(outer) is not block:
        outer = model.tree.parent.get(outer)
        if outer is None or isinstance(outer, (cst.FunctionDef, cst.ClassDef)):
            return None
    body = list(block.body)
    between = body[body.index(init_line) + 1: body.index(outer)]
    if any(_mentions(model, statement, name) for statement in between):
        return None
    site_line = model.tree.parent[accumulation.site]
    if any(not model.tree.contains(site_line, node) for node in _mentions(model, outer, name)):
        return None
    return init_line, outer


def _guard_selects_piece(model: SemanticModel, accumulation: JoinAccumulation) -> bool:
    """``piece if acc is None else cat([acc, piece])`` (or the ``is not None`` mirror)."""
    guard = accumulation.guard
    test = guard.test
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and
            carried_name(test.left) == accumulation.name and
            isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None"):
        return False
    is_none = isinstance(test.comparisons[0].operator, cst.Is)
    selected = guard.body if is_none else guard.orelse
    joined = guard.orelse if is_none else guard.body
    return joined is accumulation.join and model.code(selected) == model.code(accumulation.piece)
