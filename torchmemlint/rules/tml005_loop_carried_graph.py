"""TML005 loop-carried-graph.

## What it does
Flags a value carried from one iteration to the next that stays graph-attached: recurrent state
fed back into a model (`h = rnn(x, h)`, `out, (h, c) = lstm(x, (h, c))`,
`out, self.hidden = self.lstm(x, self.hidden)` in `forward`), adversarial inputs updated from
themselves (`x_adv = x_adv + alpha * grad.sign()`), exponential moving averages and running
statistics of graph-attached values (`ema = 0.9 * ema + 0.1 * loss`,
`self.running_mean = m * self.running_mean + (1 - m) * x.mean(0)` in `forward`), and manual
updates of tensors that require grad (`W = W - lr * W.grad`); also graph-attached values written
*in place* into a tensor that outlives the step (a registered buffer updated in `forward` with
`self.running_mean.mul_(m).add_((1 - m) * x.mean(0))`, a memory bank `bank[idx] = emb`, class
centers `self.centers[y] = ...`) — in a loop that runs a backward
pass or an optimizer step (or iterates a loader), or across calls of a per-step method.

## Why is this bad?
The new value's graph links to the previous value's graph, so each iteration's graph hangs off
the last one: the chain grows without bound. The graph nodes (and the tensors they saved, when
no backward freed them) stay alive, memory grows every step and each backward walks further
back — or PyTorch stops with "Trying to backward through the graph a second time" (and adding
`retain_graph=True` to silence it makes the growth worse, see TML006).

Silent when the chain is cut in the iteration: `h = h.detach()`,
`hidden = tuple(h.detach() for h in hidden)`, `hidden = repackage_hidden(hidden)`, a fresh value
(`h = model.init_hidden()`), `h.detach_()`, an update under `torch.no_grad()`, or a reset method
of the class (`init_hidden`, `reset_states`). Also silent: state carried only inside one step
(`for t in range(seq_len): h = cell(x[t], h)` is backpropagation through time), unrolled
differentiable optimization (`create_graph=True`), sums (`total = total + loss` is TML001's) and
concatenation accumulators (TML008's).

## Example
```python
hidden = model.init_hidden(batch_size)
for x, y in loader:
    output, hidden = model(x, hidden)
    loss = criterion(output, y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
hidden = model.init_hidden(batch_size)
for x, y in loader:
    hidden = repackage_hidden(hidden)  # or hidden.detach() / tuple(h.detach() for h in hidden)
    output, hidden = model(x, hidden)
    ...
```

## Fix safety
For an update of the carried value (arithmetic: EMA, running statistics, `x_adv`, `W`), the fix
detaches the new value — `ema = (0.9 * ema + 0.1 * loss).detach()` — and, when the tensor must
keep requiring grad for the next iteration (its `.grad` is read, it is differentiated), makes it a
new leaf with `.requires_grad_()`. For recurrent state fed to a module, it detaches the previous
value where the iteration reads it — `model(x, h.detach())`, or
`tuple(s.detach() for s in hidden)` for a tuple of states — when the state's type is known from
its initialisation (a tensor factory, a tuple of them, a helper of the file returning one); for a
state that starts as `None` or comes from elsewhere there is no fix. For an in-place write, it
detaches the written value (`bank[idx] = emb.detach()`). Always **unsafe**: gradients
no longer flow into earlier iterations, which is the point, but changes what backward computes.

## Runtime signature
Live memory (and backward time) grows every iteration — `confirmed-growth` — or the second
backward fails with "Trying to backward through the graph a second time".
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import call_method
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.flow import SEQUENCE, TENSOR, Value
from torchmemlint.semantics.loop_carried import STATE, UPDATE, Carry, carried_name
from torchmemlint.semantics.prescreen import IN_PLACE_WRITE, LOOP_ASSIGNMENT, SELF_ASSIGNMENT, SUBSCRIPT_STORE


class LoopCarriedGraph(Rule):
    code = "TML005"
    name = "loop-carried-graph"
    message = "value carried into the next iteration keeps its autograd graph: each step's graph links to the previous one"
    triggers = ("=",)

    needs_steps = True
    keeping = frozenset({LOOP_ASSIGNMENT, SELF_ASSIGNMENT, SUBSCRIPT_STORE, IN_PLACE_WRITE})

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        by_site: dict[cst.CSTNode, list[Carry]] = {}
        for carry in model.loop_carried.chains:
            if carry.kind in (UPDATE, STATE):
                by_site.setdefault(carry.site, []).append(carry)
        for site, carries in by_site.items():
            names = sorted({c.name for c in carries})
            spelled = ", ".join(f"`{n}`" for n in names)
            message = (f"{spelled} {'is' if len(names) == 1 else 'are'} carried into the next iteration with "
                       f"{'its' if len(names) == 1 else 'their'} autograd graph: every step's graph links to the "
                       f"previous one, so memory and backward time grow; detach once per iteration "
                       f"(`{names[0]} = {names[0]}.detach()`, `repackage_hidden`)")
            yield Finding(site, message=message, fix=_detach_fix(model, site, carries))
        for write in model.loop_carried.in_place_writes:
            target = model.code(write.target)
            message = (f"`{target}` is carried into the next iteration with its autograd graph: every step's graph "
                       f"links to the previous one, so memory and backward time grow; store a `.detach()`ed value") \
                if write.slot else (
                f"`{target}` is written in place with a graph-attached value: the tensor joins the autograd graph "
                f"and every step's write links to the previous one, so memory and backward time grow; write a "
                f"`.detach()`ed value, or update under `torch.no_grad()`")
            yield Finding(write.site, message=message,
                fix=NodeFix("detach the written value", safe=False,
                            replacements=[Replacement(write.value, call_method(write.value, "detach"))]))


def _detach_fix(model: SemanticModel, site: cst.CSTNode, carries: list[Carry]) -> Optional[NodeFix]:
    first = carries[0]
    if first.kind == UPDATE:
        if len(carries) != 1 or not isinstance(site, cst.Assign):
            return None
        if not first.requires_grad or _marks_requires_grad(model, first):
            return NodeFix("detach the carried value", safe=False,
                           replacements=[Replacement(site.value, call_method(site.value, "detach"))])
        # The value the next iteration starts from must be a new leaf that requires grad: detach
        # the last assignment of the iteration (``x_adv = x_adv.clamp(0, 1)`` after the update).
        last = _last_assignment(model, site, first.name)
        if last is None:
            return None
        return NodeFix("make the carried tensor a new leaf", safe=False,
                       replacements=[Replacement(last.value, call_method(last.value, "detach", "requires_grad_"))])
    replacements = []
    for carry in carries:
        kind = _state_kind(model, carry)
        for read in carry.reads:
            if kind == TENSOR:
                new = call_method(read, "detach")
            elif kind == SEQUENCE:
                new = cst.parse_expression(f"tuple(state.detach() for state in {model.code(read)})")
            else:
                return None
            replacements.append(Replacement(read, new))
    return NodeFix("detach the carried state where the iteration reads it", safe=False, replacements=replacements)


def _last_assignment(model: SemanticModel, site: cst.Assign, name: str) -> Optional[cst.Assign]:
    """The last plain assignment of ``name`` in the block of ``site`` (``site`` itself when no later
    one), provided no later assignment hides in a nested branch."""
    line = model.tree.parent.get(site)
    block = model.tree.parent.get(line)
    if not isinstance(block, cst.IndentedBlock):
        return None
    body = list(block.body)
    last = site
    for statement in body[body.index(line) + 1:]:
        for assign in model.tree.descendants(statement, cst.Assign):
            if any(carried_name(t.target) == name for t in assign.targets):
                if statement is not model.tree.parent.get(assign) or len(assign.targets) != 1:
                    return None
                last = assign
    return last


def _marks_requires_grad(model: SemanticModel, carry: Carry) -> bool:
    """The iteration itself calls ``x.requires_grad_()`` before using the value again."""
    region = carry.iteration if isinstance(carry.iteration, cst.FunctionDef) else carry.iteration.body
    return any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value == "requires_grad_" and carried_name(c.func.value) == carry.name
        for c in model.tree.descendants(region, cst.Call)
    )


def _state_kind(model: SemanticModel, carry: Carry) -> Optional[str]:
    """What the state surely is at the start of the iteration (TENSOR, or SEQUENCE for a tuple of
    tensors), from its initialisation: the fix calls ``.detach()`` on it, which a tuple lacks."""
    if carry.name.startswith("self."):
        func = carry.iteration if isinstance(carry.iteration, cst.FunctionDef) else model.scopes.function_of(carry.iteration)
        cls = model.scopes.class_of(func) if func is not None else None
        if cls is None:
            return None
        initial = [model.flow.assigned_value(a) for a in model.flow.self_assignments(cls).get(carry.name[5:], ())
                   if (init := model.scopes.function_of(a.node)) is not None and init.name.value == "__init__"]
        kinds = {_fixable_kind(value) for value in initial}
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(carry.iteration, cst.FunctionDef):
        return None
    return _fixable_kind(model.flow.value(cst.Name(carry.name), carry.iteration))


def _fixable_kind(value: Value) -> Optional[str]:
    if value.kind == TENSOR:
        return TENSOR
    if value.kind == SEQUENCE and value.elements and all(e.kind == TENSOR for e in value.elements):
        return SEQUENCE
    return None
