"""TML006 retain-graph-in-loop.

## What it does
Flags `.backward(retain_graph=True)` (also `scaler.scale(loss).backward(retain_graph=True)`,
`accelerator.backward(loss, retain_graph=True)`, `self.manual_backward(loss, retain_graph=True)`,
`torch.autograd.backward/grad(..., retain_graph=True)`) when it is the last backward pass of a
loop iteration and graph-attached values outlive the iteration: a loop-carried value that keeps
its graph (`h = rnn(x, h)`, see TML005), an accumulation (`total += loss`), or an attached value
stored in a container that outlives the loop (`losses.append(loss)`) — or when a backward of each
optimizer step differentiates a graph made before the loop (`fake = netG(z)` before the
generator's steps, a penalty `self.reg_loss` built once in `__init__`), the graph that forces the
flag and that every step's retained graph stays linked to. With none of those, the last backward
of a training loop's step that retains its graph is still reported, for the peak: nothing
differentiates that graph again, but the loop's names hold it into the next step.

## Why is this bad?
`retain_graph=True` keeps the graph's saved tensors (the activations) after backward instead of
freeing them. That is needed when a second backward goes through the same graph *in the same
iteration*. As the last backward of an iteration it only pays off if a later iteration reaches
this graph again — which is exactly the case when something carries it over: then every
iteration's full set of activations stays alive and memory grows by a step's activations per
iteration. The usual story: "Trying to backward through the graph a second time" appeared
because hidden state was carried over, and `retain_graph=True` silenced the error.

With nothing carried over the graph dies when the loop's names (`out`, `loss`) are rebound, but
that happens after the next step's forward: its saved activations, which a plain backward would
have freed, stay alive beside the next step's, about doubling peak memory for nothing.

The same peak is reported for a per-step *method* whose graph `self` keeps (a pix2pix-style
model: `forward()` stores `self.fake_B`, `backward_G` stores `self.loss_G` and ends with
`self.loss_G.backward(retain_graph=True)`) when no later backward of the step reaches a graph
held on `self`, and for `for loss in losses: loss.backward(retain_graph=True)`, whose last pass
retains too.

Two backward passes in one iteration where only the first retains the graph (a GAN's
discriminator and generator losses, several heads sharing a trunk) stay silent, as does a
retaining last backward of a step *function* whose graph only its locals hold (they die when it
returns) and a loop inside one training step (over environments or heads sharing one forward
pass, with the optimizer step after it).

## Example
```python
hidden = model.init_hidden(batch_size)
for x, y in loader:
    output, hidden = model(x, hidden)
    loss = criterion(output, y)
    loss.backward(retain_graph=True)
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    hidden = tuple(h.detach() for h in hidden)
    output, hidden = model(x, hidden)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
```

## Fix safety
Where what outlives the iteration is a kept or accumulated value (`history.append(loss)`,
`total += loss`) that no later backward goes through, or nothing at all, the fix removes
`retain_graph=True`: the
next iteration's backward does not reach the old graph, so nothing needs its saved tensors. It is
**unsafe**: code that does differentiate the kept graph again (outside what the file shows) would
then fail with "Trying to backward through the graph a second time". Where a loop-carried value
(`h = rnn(x, h)`, an EMA) feeds the old graph into the next iteration there is no fix: removing
the flag alone turns the growth into exactly that error. Cut the carried graph first (TML005's
`.detach()`), after which the flag only costs the peak and its fix removes it. Nor is there one for a graph made before the loop:
rebuild it inside the step (or detach it), then drop the flag.

## Runtime signature
Live memory grows by one step's activations per iteration (`confirmed-growth`); where nothing
carries the graph over, the peak exceeds the fixed twin's by about one step's activations
(`confirmed-peak-excess`).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import remove_keyword_argument
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.iterations import Iteration, keyword_is_true
from torchmemlint.semantics.loop_carried import STATE, UPDATE
from torchmemlint.semantics.scopes import carried_name
from torchmemlint.semantics.flow import NON_GRAPH_ATTRIBUTES


class RetainGraphInLoop(Rule):
    code = "TML006"
    name = "retain-graph-in-loop"
    message = "backward(retain_graph=True) ends the iteration while graph-attached values outlive it: every iteration's graph and activations stay alive"
    triggers = ("retain_graph",)

    needs_steps = True

    def could_match(self, facts: FileFacts) -> bool:
        return super().could_match(facts) and "retain_graph" in facts.true_keywords

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for call in model.tree.nodes(cst.Call):
            if not keyword_is_true(call, "retain_graph") or not model.calls.backward_roots(call):
                continue
            for iteration in _iterations_around(model, call):
                if not _is_last_backward(model, call, iteration):
                    break
                kept = _outliving_attached(model, iteration)
                if kept is not None:
                    fix, no_fix = _removal_fix(model, call, iteration)
                    yield Finding(call, message=f"backward(retain_graph=True) ends the iteration while `{kept}` keeps "
                                                f"a graph-attached value across iterations: every iteration's graph "
                                                f"and activations stay alive", fix=fix, no_fix=no_fix)
                    break
                made_before = _graph_made_before(model, call, iteration)
                if made_before is not None:
                    yield Finding(call, message=f"backward(retain_graph=True) ends the iteration because `{made_before}`, "
                                                f"a graph made before it, is differentiated again every iteration: "
                                                f"each iteration's graph and activations are retained with it",
                                  no_fix=f"no automatic fix: the next iteration differentiates `{made_before}`'s graph "
                                         f"again; rebuild it inside the iteration (or detach it), then drop the flag")
                    break
                if isinstance(iteration, (cst.For, cst.While)) and _graph_made_inside(model, call, iteration) \
                        or isinstance(iteration, cst.FunctionDef) and _kept_on_self_to_the_next_step(model, call, iteration):
                    # Nothing reaches this graph again, but the loop's names (or ``self``'s
                    # attributes) hold it until the next step rebinds them, after that step's
                    # forward: two steps' activations.
                    fix, no_fix = _removal_fix(model, call, iteration)
                    yield Finding(call, message="backward(retain_graph=True) is the last backward of the step and "
                                                "nothing differentiates this graph again: its saved activations stay "
                                                "alive through the next step's forward, about doubling peak memory",
                                  fix=fix, no_fix=no_fix)
                break


def _removal_fix(model: SemanticModel, call: cst.Call, iteration: Iteration) -> tuple[Optional[NodeFix], str]:
    """Remove ``retain_graph=True`` unless a later backward may go through the retained graph: a
    value carried into the next iteration's forward (recurrent state, an update), or a kept name
    that some backward of the scope differentiates."""
    ended = _steps_it_ends(model, iteration)
    for carry in model.loop_carried.chains:
        if (carry.iteration is iteration or carry.iteration in ended) and carry.kind in (STATE, UPDATE):
            return None, (f"no automatic fix: `{carry.name}` carries this graph into the next iteration, whose "
                          f"backward would fail without the flag; detach it first (TML005)")
    feeding = model.calls.names_feeding_backward(model.scopes.scope_of(call))
    for store in model.stores.stores():
        name = carried_name(store.container)
        if model.tree.contains(iteration, store.node) and name in feeding:
            return None, f"no automatic fix: `{name}` is differentiated again later, through the retained graph"
    if not any(arg.keyword is not None and arg.keyword.value == "retain_graph" for arg in call.args):
        return None, "no automatic fix: `retain_graph` is not passed by keyword"
    region = iteration if isinstance(iteration, cst.FunctionDef) else iteration.body
    if any(model.tree.contains(region, loop) for loop in model.scopes.loops_around(call)):
        return None, ("no automatic fix: the same call runs the step's earlier backwards (`for loss in losses:`), "
                      "which need the flag; retain on all but the last")
    return NodeFix("remove `retain_graph=True`", safe=False,
                   replacements=[Replacement(call, remove_keyword_argument(call, "retain_graph"))]), ""


def _graph_made_before(model: SemanticModel, call: cst.Call, iteration: Iteration) -> Optional[str]:
    """A graph-attached value made before the iteration (a name bound before the loop, a ``self``
    attribute no code of the iteration rebinds) that a backward of the iteration differentiates, read directly
    or through names the iteration computes from it: the graph a step cannot free, so every
    iteration must retain (``fake = netG(z)`` before the generator steps, ``self.reg_loss`` built
    in ``__init__``). Only for iterations that step an optimizer: a loop over heads or
    environments sharing one forward pass differentiates that step's graph, rightly retained."""
    if isinstance(iteration, cst.FunctionDef) or not model.iterations.steps_optimizer(iteration):
        return None
    roots = [root for step in model.iterations.step_calls(iteration) for root in model.calls.backward_roots(step)]
    return next((carried_name(expr) for expr in _graphs_from_before(model, roots, iteration, call)), None)


def _graphs_from_before(model: SemanticModel, roots: list[cst.BaseExpression], iteration: Iteration,
                        at: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """What ``roots`` are computed from that comes from before ``iteration`` and holds a graph."""
    return (expr for expr, before in _traced(model, roots, iteration) if before and model.flow.value(expr, at).graph)


def _graph_made_inside(model: SemanticModel, call: cst.Call, iteration: Iteration) -> bool:
    """The graph ``call`` differentiates comes from a forward pass the iteration runs, directly or
    in a function of the file whose result holds a graph (not only from a graph made before it,
    differentiated again on every pass: that one must be retained), and no function of the file
    called after it in the iteration differentiates again (a probe taking a second gradient
    through the same graph)."""
    for later in model.tree.descendants(iteration.body, cst.Call):
        callee = model.calls.callee(later) if model.tree.before(call, later) else None
        if callee is not None and isinstance(callee.function, cst.FunctionDef) and model.calls.runs_backward(callee.function):
            return False
    forward = False
    for expr, before in _traced(model, model.calls.backward_roots(call), iteration):
        if isinstance(expr, cst.Name) and _carried_into(model, expr, iteration):
            return False  # the previous step's graph is read (``out, h = model(x, h)``, cut every k steps)
        forward = forward or not before and isinstance(expr, cst.Call) and (
            model.calls.is_forward_pass(expr) or model.calls.callee(expr) is not None and model.flow.value(expr, call).graph)
    return forward


def _kept_on_self_to_the_next_step(model: SemanticModel, call: cst.Call, step: cst.FunctionDef) -> bool:
    """A per-step method's retaining backward differentiates a graph this step made that
    ``self`` keeps (``self.loss_G = ...`` from ``self.fake_B``, which the class's ``forward()``
    rebinds every step), and no later backward of the step (in the methods its callers run after
    it) reaches a graph ``self`` holds: the saved activations stay alive until the next step
    rebinds the attributes, after its forward. A graph only ``__init__`` makes is differentiated
    again every step: that one must be retained."""
    kept = made_this_step = False
    for expr, before in _traced(model, model.calls.backward_roots(call), step):
        spelled = carried_name(expr)
        if spelled is not None and spelled.startswith("self."):
            if not before and model.loop_carried.reaches_previous(model.tree.statement_of(expr), spelled, step):
                return False  # the previous call's value is read (``out, self.h = self.model(x, self.h)``)
            if not before:
                kept = True
            elif model.flow.value(expr, call).graph:
                if not _rebound_per_step(model, spelled, step):
                    return False
                kept = made_this_step = True
        elif not before and isinstance(expr, cst.Call) and model.calls.is_forward_pass(expr):
            made_this_step = True
        elif before and isinstance(expr, cst.Name) and expr.value != "self" and model.flow.value(expr, call).graph:
            return False  # (a graph handed in by the caller may be differentiated again there)
    return kept and made_this_step and not any(
        _reaches_graph_on_self(model, later) for later in _backwards_after(model, step))


def _rebound_per_step(model: SemanticModel, attribute: str, step: cst.FunctionDef) -> bool:
    owner = model.scopes.self_class(step)
    return owner is not None and any(
        method.name.value != "__init__" and model.iterations.runs_per_step(method)
        and model.loop_carried.bindings_in(attribute, method)
        for method in model.tree.descendants(owner, cst.FunctionDef) if model.scopes.self_class(method) is owner)


def _backwards_after(model: SemanticModel, step: cst.FunctionDef) -> Iterator[cst.Call]:
    """The backward calls that run after ``step`` returns, in the functions that call it: theirs,
    and those of the file's functions they call after it."""
    for site in model.calls.call_sites(step):
        caller = model.scopes.function_of(site)
        for later in model.tree.descendants(caller if caller is not None else model.tree.module, cst.Call):
            if not model.tree.before(site, later) or model.tree.contains(site, later):
                continue
            if model.calls.backward_roots(later):
                yield later
            callee = model.calls.callee(later)
            if callee is not None and isinstance(callee.function, cst.FunctionDef) and callee.function is not step:
                yield from (c for c in model.scopes.scope_nodes(callee.function, cst.Call) if model.calls.backward_roots(c))


def _reaches_graph_on_self(model: SemanticModel, backward: cst.Call) -> bool:
    """A backward whose differentiated value reads, from before its function, a graph-attached
    ``self`` attribute or argument (``self.mu2`` that ``forward()`` kept)."""
    func = model.scopes.function_of(backward)
    if func is None:
        return True
    return any(not (isinstance(expr, cst.Name) and expr.value == "self")
               for expr in _graphs_from_before(model, model.calls.backward_roots(backward), func, backward))


def _carried_into(model: SemanticModel, name: cst.Name, iteration: Iteration) -> bool:
    """``name`` may hold, where it is read, what the previous pass of the loop bound: the loop
    binds it at or after the read, and a binding from outside the loop (not the loop's own
    target) still reaches the read (``h = None`` before it, ``h = h.detach()`` only every k
    steps)."""
    body = iteration.body
    rebound_after = any(model.tree.contains(body, b.node) and (model.tree.contains(b.node, name) or
                                                               not model.tree.before(b.node, name))
                        for b in model.scopes.bindings(model.scopes.scope_of(name)).get(name.value, ()))
    return rebound_after and any(not model.tree.contains(body, b.node) and b.node is not iteration
                                 for b in model.scopes.reaching_bindings(name.value, name))


def _traced(model: SemanticModel, roots: list[cst.BaseExpression],
            iteration: Iteration) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """What ``roots`` are computed from, traced back through the names the iteration binds and
    the operands of its calls and operators (not through ``.detach()``, ``.item()``): each
    expression reached, with True where the trace leaves the iteration (a name bound before it, a
    ``self`` attribute it does not rebind)."""
    region = iteration.body
    pending = list(roots)
    seen: set[cst.CSTNode] = set()
    while pending and len(seen) < 64:
        expr = pending.pop()
        if expr in seen:
            continue
        seen.add(expr)
        spelled = carried_name(expr)
        if isinstance(expr, cst.Attribute) and spelled is not None and spelled.startswith("self."):
            bound_inside = model.loop_carried.bindings_in(spelled, iteration)
            yield expr, not bound_inside
            pending.extend(b.value for b in bound_inside if getattr(b, "value", None) is not None)
            continue
        if isinstance(expr, cst.Name):
            bindings = model.scopes.reaching_bindings(expr.value, expr)
            inside = [b for b in bindings if model.tree.contains(region, b.node)]
            if inside:
                yield expr, False
                # (``for loss in losses:``: the element comes from what the loop iterates)
                pending.extend(b.value if b.value is not None else b.node.iter for b in inside
                               if b.value is not None or isinstance(b.node, cst.For))
            elif bindings:
                yield expr, True
            continue
        yield expr, False
        if isinstance(expr, cst.Call):
            if not model.loop_carried.breaks_graph(expr):  # (``x.detach()``, ``loss.item()``: no graph through it)
                pending.extend(arg.value for arg in expr.args)
                if isinstance(expr.func, cst.Attribute):
                    pending.append(expr.func.value)
        elif isinstance(expr, cst.BinaryOperation):
            pending += (expr.left, expr.right)
        elif isinstance(expr, cst.UnaryOperation):
            pending.append(expr.expression)
        elif isinstance(expr, (cst.Subscript, cst.Attribute)) and not (
                isinstance(expr, cst.Attribute) and expr.attr.value in NON_GRAPH_ATTRIBUTES):
            pending.append(expr.value)
        elif isinstance(expr, (cst.Tuple, cst.List)):
            pending.extend(element.value for element in expr.elements)


def _iterations_around(model: SemanticModel, call: cst.Call) -> list[Iteration]:
    """Loops whose iterations are training steps (they step an optimizer, or run a step through
    a helper), then the function around the call when it runs once per step (a per-step method,
    or a helper called from a step loop)."""
    iterations: list[Iteration] = [
        loop for loop in model.scopes.loops_around(call)
        if model.iterations.steps_optimizer(loop) or model.scopes.is_step_loop(loop)
    ]
    func = model.scopes.function_of(call)
    if func is not None and model.iterations.runs_per_step(func):
        iterations.append(func)
    return iterations


def _steps_it_ends(model: SemanticModel, iteration: Iteration) -> set[cst.FunctionDef]:
    """A LightningModule's ``backward(self, loss)`` hook ends the step its ``training_step`` made:
    what that method carries to the next step is carried across this backward."""
    cls = model.scopes.self_class(iteration) if isinstance(iteration, cst.FunctionDef) else None
    if cls is None or iteration.name.value != "backward" or not model.scopes.is_lightning_module(cls):
        return set()
    return {m for m in model.tree.descendants(cls, cst.FunctionDef)
            if m.name.value == "training_step" and model.scopes.self_class(m) is cls}


def _is_last_backward(model: SemanticModel, call: cst.Call, iteration: Iteration) -> bool:
    return not any(
        model.tree.before(call, other) and not model.tree.contains(call, other)
        for other in model.iterations.step_calls(iteration) if model.calls.backward_roots(other)
    )


def _outliving_attached(model: SemanticModel, iteration: Iteration) -> Optional[str]:
    """What keeps a graph-attached value from one iteration to the next, spelled, or None: a
    loop-carried value, a store into a container that outlives the iteration (also through a
    callee: ``history.add(loss)``), or an accumulation into an outliving name."""
    region = iteration if isinstance(iteration, cst.FunctionDef) else iteration.body
    forwards = _forwards_run_in(model, region) | _steps_it_ends(model, iteration)
    for carry in model.loop_carried.chains:
        if carry.iteration is iteration or carry.iteration in forwards:
            return carry.name
    holds_graph = model.loop_carried.holds_graph
    for store in model.stores.stores():
        if model.tree.contains(region, store.node) and not store.device_only and not store.made_inside and not model.stores.never_grows(store) \
                and model.stores.outlives(store.container, store.node, iteration) \
                and holds_graph(store.value, store.node):
            return carried_name(store.container) or model.code(store.container)
    for accumulation in model.stores.accumulations():
        if model.tree.contains(region, accumulation.node) \
                and model.stores.outlives(accumulation.target, accumulation.node, iteration) \
                and holds_graph(accumulation.value, accumulation.node):
            return carried_name(accumulation.target) or model.code(accumulation.target)
    return None


def _forwards_run_in(model: SemanticModel, region: cst.CSTNode) -> set[cst.FunctionDef]:
    """The ``forward`` methods of the file's modules that calls in ``region`` run: ``self(x)`` in
    a method of the module, ``model(x)`` on an object built from one of the file's classes (or,
    when nothing says which, a model passed in: any of the file's module classes may be it)."""
    found = set()
    for call in model.tree.descendants(region, cst.Call):
        func = call.func
        if not isinstance(func, cst.Name):
            continue
        built_from = model.scopes.classes_built_into(func, call) if func.value != "self" else []
        if func.value != "self" and not built_from and model.calls.is_forward_pass(call):
            built_from = [cls.name.value for cls in model.scopes.classes_by_name.values()
                          if model.scopes.is_torch_module_class(cls)]
        for name in built_from:
            cls = model.scopes.classes_by_name.get(name.rsplit(".", 1)[-1])
            forward = model.calls.method_of(cls, "forward") if cls is not None else None
            if forward is not None:
                found.add(forward)
        if func.value == "self":
            owner = model.scopes.self_class(model.scopes.function_of(call))
            forward = model.calls.method_of(owner, "forward") if owner is not None else None
            if forward is not None:
                found.add(forward)
    return found
