"""TML005 loop-carried-graph.

## What it does
Flags a value carried from one iteration to the next that stays graph-attached: recurrent state
fed back into a model (`h = rnn(x, h)`, `out, (h, c) = lstm(x, (h, c))`,
`out, self.hidden = self.lstm(x, self.hidden)` in `forward`), adversarial inputs updated from
themselves (`x_adv = x_adv + alpha * grad.sign()`), exponential moving averages and running
statistics of graph-attached values (`ema = 0.9 * ema + 0.1 * loss`,
`self.running_mean = m * self.running_mean + (1 - m) * x.mean(0)` in `forward`), and manual
updates of tensors that require grad (`W = W - lr * W.grad`); also graph-attached values written
*in place* into a tensor that outlives the step, blending in its old value or read again as a
tensor (a registered buffer updated in `forward` with
`self.running_mean.mul_(m).add_((1 - m) * x.mean(0))`, a memory bank `bank[idx] = emb`, class
centers `self.centers[y] = ...`; a running total read only as a number is TML001's) — in a loop that runs a backward
pass or an optimizer step, itself or through a function of the file it calls (`img =
forward_step(model, img, ...)`, whose `autograd.grad` is the step), or iterates a loader, in an
evaluation loop with grad on (a function
in eval mode handing each element to a model, or to a helper together with the model), in a
rollout (a loop stepping an environment) or another step loop that runs a model with no
backward after it (an endless inference stream; a sampler of generation code outside any model,
whose `x = x + slope * dt` computes `slope` from `x`), or across calls of a per-step method. A model
passed in whose result is unpacked into as many parts as every model class of the file returns
is read as those classes' `forward` (a memory they return detached is not flagged). An
unroll whose only gradients are `torch.autograd.grad` inner steps, with the backward or
optimizer step right after the loop (a truncated meta-learning unroll), carries its graph on
purpose and is not flagged; the carry must then be cut in the loop around it. A reset only for a
new batch size (`if self.hidden.size(1) != x.size(0): self.hidden = self.init_hidden(...)`), or
only when a rollout's episode ends (`if done: hx = torch.zeros(1, 256)`, `hx = torch.zeros(1, 256) if
done else hx`), does not cut the carry
on the other steps; a write followed in its block by `t = t.detach()`, and an
object of the file whose `detach()` method rebinds its own attributes detached (`state.detach()`),
do. Where a method of a plain class (a meter, a tracker: not a module) that returns nothing
carries what code outside the class hands it (`self.v = (self.v * self.n + x) / (self.n + 1)` in
`Averager.add`), the finding is on each call that hands it a graph (`meter.add(loss)`), where the
mistake is, with the method's update as related location.

## Why is this bad?
The new value's graph links to the previous value's graph, so each iteration's graph hangs off
the last one: the chain grows without bound. The graph nodes (and the tensors they saved, when
no backward freed them) stay alive, memory grows every step and each backward walks further
back — or PyTorch stops with "Trying to backward through the graph a second time" (and adding
`retain_graph=True` to silence it makes the growth worse, see TML006).

Silent when the chain is cut in the iteration: `h = h.detach()`,
`hidden = tuple(h.detach() for h in hidden)`, `hidden = repackage_hidden(hidden)`, a fresh value
(`h = model.init_hidden()`), `h.detach_()`, an update under `torch.no_grad()`, a reset method
of the class (`init_hidden`, `reset_states`) run every step (not only once per epoch), or a
function of the file that detaches its parameter first (`hidden = repackage_hidden(hidden)` in
`compute_step(batch, hidden)`). Also silent: state carried only inside one step
(`for t in range(seq_len): h = cell(x[t], h)` is backpropagation through time), unrolled
differentiable optimization (`create_graph=True`), sums (`total = total + loss` is TML001's),
concatenation accumulators (TML008's), caches (`self.kv_cache`) and Transformer-XL memories
(`self.mems = outputs[1]`: the model returns them detached). `forward` of a class whose base
comes from a model library (`class Decoder(FairseqIncrementalDecoder)`) is a module's forward
like one of an `nn.Module` subclass.

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
For an update of the carried value (arithmetic: EMA, running statistics, `x_adv`, `W`) that is
surely a tensor (the value flow says so, or it is made with `-`, `/`, `**` or `@`, which no tuple,
list or dict has), the fix detaches the new value — `ema = (0.9 * ema + 0.1 * loss).detach()` — and, when the tensor must
keep requiring grad for the next iteration (its `.grad` is read, it is differentiated), makes it a
new leaf with `.requires_grad_()`. Where the same iteration goes on to use the updated value in its
graph (a step function returns it, this step's loss is computed from it), detaching it would cut
this step's gradient too (and leave a loss with no graph): the fix detaches the previous value where
the update reads it instead — `self.memory = 0.5 * self.memory.detach() + self.proj(x)` — when that
value is surely a tensor, and gives no fix otherwise. For recurrent state fed to a module, it detaches the previous
value where the iteration reads it — `model(x, h.detach())`, or
`tuple(part.detach() for part in hidden)` for a tuple of states — when the state's type is known from
its initialisation (a tensor factory, a tuple of them, a helper of the file returning one); where
the iteration resets the state only on some steps (`hidden = torch.zeros(1, 128) if done else
hidden`), it detaches the arm that hands it on, once per iteration, so that a backward within the
iteration still runs through its inner steps. A
state whose type is not known (`model.init_hidden()`, `None` at first) is read through
`detach_state(hidden)`, a helper the fix adds after the module's imports: it detaches a tensor,
a tuple or list of them element by element, and returns anything else unchanged, so it cannot
fail on what the state turns out to be (no fix where the file binds `torch` to something else,
nor where the state may be an object of a class of the file, which the helper would leave
attached).
For an in-place write, it detaches the written value where it is surely a tensor
(`bank[idx] = emb.detach()`); for a value handed to a meter's method, the argument where it is
surely a tensor (`meter.add(loss.detach())`); none for a slot unpacked from a call that returns
several values (`out, self.states[i] = layer(x, self.states[i])`). Always **unsafe**: gradients
no longer flow into earlier iterations, which is the point, but changes what backward computes.

## Runtime signature
Live memory (and backward time) grows every iteration — `confirmed-growth` — or the second
backward fails with "Trying to backward through the graph a second time".
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule, explained
from torchmemlint.rules.edits import call_method, torch_name_taken, torch_spelling, with_torch_import, without_graph
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.flow import SEQUENCE, TENSOR, TENSOR_OPERATORS, Value
from torchmemlint.semantics.loop_carried import STATE, UPDATE, Carry
from torchmemlint.semantics.scopes import carried_name
from torchmemlint.semantics.prescreen import CARRY_ASSIGNMENT, IN_PLACE_WRITE, LOOP_ASSIGNMENT, SUBSCRIPT_STORE


class LoopCarriedGraph(Rule):
    code = "TML005"
    name = "loop-carried-graph"
    message = "value carried into the next iteration keeps its autograd graph: each step's graph links to the previous one"
    triggers = ("=",)

    needs_steps = True
    keeping = frozenset({LOOP_ASSIGNMENT, CARRY_ASSIGNMENT, SUBSCRIPT_STORE, IN_PLACE_WRITE})

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        by_site: dict[cst.CSTNode, list[Carry]] = {}
        reads: dict[cst.CSTNode, dict[str, list[cst.BaseExpression]]] = {}  # region -> carried name -> its reads
        for carry in model.loop_carried.chains:
            if carry.kind in (UPDATE, STATE) and not carry.in_callee:  # (the callee's own finding)
                by_site.setdefault(carry.site, []).append(carry)
        handed_reported: set[cst.CSTNode] = set()  # (a meter updating two attributes from one call)
        for site, carries in by_site.items():
            names = sorted({c.name for c in carries})
            spelled = ", ".join(f"`{n}`" for n in names)
            message = (f"{spelled} {'is' if len(names) == 1 else 'are'} carried into the next iteration with "
                       f"{'its' if len(names) == 1 else 'their'} autograd graph: every step's graph links to the "
                       f"previous one, so memory and backward time grow; detach once per iteration "
                       f"(`{names[0]} = {names[0]}.detach()`, `repackage_hidden`)")
            handed = model.loop_carried.graphs_handed_in(site)
            if handed:  # (a meter's running mean: where the caller hands it a live loss is the mistake)
                yield from _handed_in_findings(model, site, names[0],
                                               [h for h in handed if h[0] not in handed_reported])
                handed_reported.update(call for call, _ in handed)
                continue
            fix, no_fix = _detach_fix(model, site, carries, reads)
            yield Finding(site, message=message, fix=fix, no_fix=no_fix)
        for write in model.loop_carried.in_place_writes:
            if write.accumulates:
                continue  # (a running total, a buffer of results: TML001's)
            target = model.code(write.target)
            message = (f"`{target}` is carried into the next iteration with its autograd graph: every step's graph "
                       f"links to the previous one, so memory and backward time grow; store a `.detach()`ed value") \
                if write.slot else (
                f"`{target}` is written in place with a graph-attached value: the tensor joins the autograd graph "
                f"and every step's write links to the previous one, so memory and backward time grow; write a "
                f"`.detach()`ed value, or update under `torch.no_grad()`")
            if write.slot and isinstance(write.site, cst.Assign) and \
                    not any(t.target is write.target for t in write.site.targets):
                yield Finding(write.site, message=message, no_fix="no automatic fix: the slot is unpacked from a "
                              "value that holds others (detach it where its next update reads it)")
                continue
            # written into a tensor (not a slot of a container): the value is a tensor operand
            detached, no_fix = without_graph(model, write.value, write.site, tensor_operand=not write.slot)
            fix = None if detached is None else NodeFix("detach the written value", safe=False,
                                                        replacements=[Replacement(write.value, detached)])
            yield Finding(write.site, message=message, fix=fix, no_fix=no_fix)


def _handed_in_findings(model: SemanticModel, site: cst.CSTNode, name: str,
                        handed: list[tuple[cst.Call, cst.BaseExpression]]) -> Iterator[Finding]:
    method = model.scopes.function_of(site)
    for call, argument in handed:
        why = [*model.flow.value(argument, call).why, (site, f"carried in `{name}` by `{method.name.value}()`")]
        message, related = explained(
            f"`{model.code(argument)}` is handed with its autograd graph to `{method.name.value}()`, which carries it "
            f"into the next call in `{name}`: every step's graph links to the previous one, so memory and backward time "
            f"grow; hand in `.item()` or a `.detach()`ed value", why)
        detached, no_fix = without_graph(model, argument, call)
        fix = None if detached is None else NodeFix("hand in the value without its graph", safe=False,
                                                    replacements=[Replacement(argument, detached)])
        yield Finding(call, message=message, related=related, fix=fix, no_fix=no_fix)


def _detach_fix(model: SemanticModel, site: cst.CSTNode, carries: list[Carry],
                reads: dict[cst.CSTNode, dict[str, list[cst.BaseExpression]]]) -> tuple[Optional[NodeFix], str]:
    first = carries[0]
    if first.kind == UPDATE:
        if len(carries) != 1 or not isinstance(site, cst.Assign):
            return None, "no automatic fix: several values, or not a plain assignment, carry the graph here"
        if not _surely_tensor_update(model, site.value, site):
            return None, "no automatic fix: what the value holds is not known (a tensor, a tuple, a dict?)"
        if not first.requires_grad and _read_after(model, first, reads):
            # The new value feeds this iteration's graph (``return self.memory``): detaching it
            # would cut this step's gradient too. Cut the chain where the previous value is read.
            if not first.reads or any(model.flow.value(read, site).kind != TENSOR for read in first.reads):
                return None, (f"no automatic fix: `{first.name}` is used after its update in this iteration, and "
                              f"what its previous value holds is not known; detach it where the update reads it")
            return NodeFix("detach the previous value where the update reads it", safe=False,
                           replacements=[Replacement(read, call_method(read, "detach")) for read in first.reads]), ""
        if not first.requires_grad or _marks_requires_grad(model, first):
            return NodeFix("detach the carried value", safe=False,
                           replacements=[Replacement(site.value, call_method(site.value, "detach"))]), ""
        return _new_leaf_fix(model, site, first)
    if first.requires_grad and len(carries) == 1 and isinstance(site, cst.Assign) and \
            _state_kind(model, first) == TENSOR:
        # (``perturbed = ascend(model, perturbed, y)`` differentiates its input: a detached read
        # would not require grad there)
        return _new_leaf_fix(model, site, first)
    replacements = []
    for carry in carries:
        kind = _state_kind(model, carry)
        for read in _cut_points(model, carry):
            if kind == TENSOR:
                new = call_method(read, "detach")
            elif kind == SEQUENCE:
                new = cst.parse_expression(f"tuple(part.detach() for part in {model.code(read)})")
            elif classes := model.flow.object_classes(carry.name, model.scopes.scope_of(read)):
                # (the helper leaves an object as it is: the fixed script would still fail)
                return None, (f"no automatic fix: `{carry.name}` may be a `{sorted(classes)[0]}` object; "
                              f"detach the tensors it holds")
            else:
                return _state_helper_fix(model, carries)
            replacements.append(Replacement(read, new))
    return NodeFix("detach the carried state where the iteration reads it", safe=False, replacements=replacements), ""


def _new_leaf_fix(model: SemanticModel, site: cst.CSTNode, carry: Carry) -> tuple[Optional[NodeFix], str]:
    """The value the next iteration starts from must be a new leaf that requires grad: detach
    the last assignment of the iteration (``x_adv = x_adv.clamp(0, 1)`` after the update)."""
    last = _last_assignment(model, site, carry.name)
    if last is None:
        return None, f"no automatic fix: `{carry.name}` is assigned again in a branch after the update"
    return NodeFix("make the carried tensor a new leaf", safe=False,
                   replacements=[Replacement(last.value, call_method(last.value, "detach", "requires_grad_"))]), ""


STATE_HELPER = "detach_state"
_STATE_HELPER_SOURCE = '''

def {name}(state):
    """``state`` without its autograd history: a tensor detached, a tuple or list of states element
    by element; anything else (None, another object) as it is."""
    if isinstance(state, {tensor}):
        return state.detach()
    if type(state) in (tuple, list):
        return type(state)({name}(part) for part in state)
    return state
'''


def _cut_points(model: SemanticModel, carry: Carry) -> tuple[cst.BaseExpression, ...]:
    """Where to detach the carried state: where the iteration reads the previous value, or, where
    it resets the state only on some steps (``hidden = zeros(...) if done else hidden``), the arm
    that hands it on: once per iteration, so the backward inside the iteration still reaches
    through the inner steps."""
    kept = model.loop_carried.kept_arm(carry)
    return (kept,) if kept is not None else carry.reads


def _state_helper_fix(model: SemanticModel, carries: list[Carry]) -> tuple[Optional[NodeFix], str]:
    """For state whose type is not known (``model.init_hidden()``, ``None`` at first):
    ``detach_state(hidden)`` where the iteration reads it, with a module-level helper that
    detaches whatever the state turns out to be — a tensor, a tuple or list of them — and leaves
    anything else alone (the ``repackage_hidden`` of PyTorch's word language model)."""
    unknown = (f"no automatic fix: what `{carries[0].name}` holds when the iteration starts is not known "
               f"(a tensor, a tuple of them, None?) and no `{STATE_HELPER}` helper can be added here")
    has_helper = any(f.name.value == STATE_HELPER for f in model.module.body if isinstance(f, cst.FunctionDef))
    if torch_name_taken(model) or not has_helper and any(
            name.value == STATE_HELPER for name in model.tree.nodes(cst.Name)
            if not isinstance(model.tree.parent.get(name), cst.FunctionDef)):
        return None, unknown  # (the name means something else here; the helper, added by an earlier fix, is reused)
    replacements = [Replacement(read, cst.parse_expression(f"{STATE_HELPER}({model.code(read)})"))
                    for carry in carries for read in _cut_points(model, carry)]
    if not has_helper:
        tensor, needs_import = torch_spelling(model, "torch.Tensor", model.module)
        anchor = _last_leading_import(model.module)
        if anchor is None or any(model.tree.contains(anchor, r.old) for r in replacements):
            return None, unknown
        helper = cst.parse_module(_STATE_HELPER_SOURCE.format(name=STATE_HELPER, tensor=tensor)).body[0]
        helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        replacements.append(Replacement(anchor, cst.FlattenSentinel([anchor, helper])))
        if needs_import:
            with_import = with_torch_import(model, replacements)
            if with_import is None:
                return None, unknown
            replacements = with_import
    return NodeFix(f"detach the carried state where the iteration reads it (`{STATE_HELPER}`, whatever it holds)",
                   safe=False, replacements=replacements), ""


def _last_leading_import(module: cst.Module) -> Optional[cst.BaseStatement]:
    """The last import of the block of imports that opens the module (after its docstring), or
    the docstring itself when nothing is imported; None for a module with neither."""
    last: Optional[cst.BaseStatement] = None
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
        if isinstance(small, (cst.Import, cst.ImportFrom)) or (last is None and isinstance(small, cst.Expr) and
                                                              isinstance(small.value, cst.SimpleString)):
            last = statement
        elif last is not None or small is None or not isinstance(small, cst.Expr):
            break
    return last


def _surely_tensor_update(model: SemanticModel, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The new value is a tensor, so that ``.detach()`` cannot fail on it: its kind says so, or
    an operator a tuple, list or dict lacks made it (``+`` and ``*`` also join and repeat
    sequences; a Python number holds no graph)."""
    if model.flow.value(value, at).kind == TENSOR:
        return True
    return isinstance(value, cst.BinaryOperation) and type(value.operator).__name__ in TENSOR_OPERATORS


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


def _read_after(model: SemanticModel, carry: Carry, reads: dict[cst.CSTNode, dict[str, list[cst.BaseExpression]]]) -> bool:
    """This iteration's graph reads the updated value: after the update, the iteration returns it
    (a step function's ``return self.memory``) or differentiates it (``loss = criterion(state, y)``,
    then ``loss.backward()``), not only logs it or reads it in another branch."""
    region = carry.iteration if isinstance(carry.iteration, cst.FunctionDef) else carry.iteration.body
    if region not in reads:  # (one walk per region, not one per carry: a loop may carry hundreds)
        by_name = reads[region] = {}
        for node in model.tree.descendants(region, cst.Name) + model.tree.descendants(region, cst.Attribute):
            parent = model.tree.parent.get(node)
            if (name := carried_name(node)) is not None and not (type(parent) is cst.Attribute and parent.attr is node):
                by_name.setdefault(name, []).append(node)
    feeding = model.calls.names_feeding_backward(model.scopes.scope_of(carry.site))
    for node in reads[region].get(carry.name, ()):
        if not model.tree.before(carry.site, node) or model.tree.contains(carry.site, node):
            continue
        statement = model.tree.statement_of(node)
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        small = statement.body[0]
        if isinstance(small, cst.Return) or (isinstance(small, cst.Assign) and any(
                name.value in feeding for t in small.targets for name in model.tree.descendants(t.target, cst.Name))) \
                or any(model.calls.backward_roots(call) for call in model.tree.descendants(statement, cst.Call)):
            return True
    return False


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
        cls = model.scopes.self_class(func)
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
