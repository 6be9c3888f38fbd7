"""TML001 graph-retained-accumulation.

## What it does
Flags a graph-attached value (a loss, a model output, anything computed from them with grad
enabled) that is stored into a container that outlives the iteration (`losses.append(loss)`,
`self.history["loss"].append(loss)`, `metrics[step] = loss`) or accumulated into a name that
outlives it (`total_loss += loss`, `total = total + loss`), also in place into a tensor kept across
steps and read back only as a number or without grad (`self.epoch_loss.add_(loss)`, `window[step % n] = loss`
into a tensor made before the loop). The value is followed wherever it
travels in the file: returned by a helper (alone, in a tuple or a dict of loss components), read
as `out.loss` or `outputs["loss"]`, handed to a method that keeps it (`meter.update(loss)` where
`update` does `self.sum += val * n` or joins it onto a state, `self.preds = torch.cat([self.preds,
preds])`, which TML008 reports there; a logger whose body appends what it gets, a replay buffer's
`push`, a torchmetrics metric with list states such as `BinaryAUROC` or a `MetricCollection` of
them, called or `update`d with the step's predictions), or stored on `self` in a method the training loop calls once per step — also by a forward
hook that appends the activations it sees, a closure handed to `optimizer.step`, a logger's
`setdefault(k, []).append(v)`, or a policy's `dist.log_prob(a)`; also a graph a helper makes
itself and keeps in a container its caller hands it (`memory.logprobs.append(dist.log_prob(a))`
in `act(obs, memory)`, called per step without `no_grad`), reported where the helper keeps it. A fixed key
(`last["loss"] = loss`) keeps only the newest value and stays silent, as do containers that the
code empties right after differentiating them (a REINFORCE agent's `learn`; not a PPO update that
reads them only `.detach()`ed, nor one run only every N steps) and hook lists emptied
(or popped) between forwards (not only once per epoch, after the batch loop). In evaluation code (a function that calls `model.eval()`), a loop
that hands its element to a model (`for clip in read_clips(path): encoder(clip)`) is a loop over
data whatever its iterable is called, and a returned list of model outputs is predictions, not
graphs kept for a caller's backward.

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
The fix rewrites only what the value flow knows the type of, and never calls a method a Python
number or a container lacks:
- a one-element tensor (`.backward()`-ed without a gradient argument, a full reduction such as
  `x.mean()`, a torch loss without `reduction="none"`, or arithmetic of those with Python
  numbers) accumulated into a name that starts as a Python number gets `.item()`: **safe** when
  the total is only ever used as a number afterwards (formatted, compared, `float()`), **unsafe**
  when it escapes (returned, printed as is, stored), because it becomes a Python float; the same
  in a local list whose elements are only used as numbers (**unsafe**: the list holds floats);
- a scalar accumulated into a dict of Python numbers (`defaultdict(float)`, `{"ce": 0.0}`) gets
  `.item()` per component at the accumulation site (**unsafe**: the dict's values become floats);
- any other tensor gets `.detach()`, a tuple or dict written out gets it per element, and a
  dict of tensors becomes `{key: tensor.detach() for key, tensor in d.items()}`: the container
  still holds tensors, but code that backpropagates through them would change, so **unsafe**.
  A value the flow cannot type is still a tensor where it is added to a Python number or into a
  tensor, or written into a tensor (`buf[t] = v`), or appended to a list that `torch.cat` joins:
  with its graph it can be nothing else; a total whose first value a branch sets
  (`if total is None: total = loss`) gets `.detach()` there too;
- anything else (a model output that may be a tuple or a `ModelOutput`, a record) gets no
  automatic fix, and `fix --diff` says so, as does a total set by the first step and summed by
  the later ones (`total = loss if total is None else total + loss`) or kept per component
  (`tuple(map(sum, zip(total, losses)))`).

## Runtime signature
Live memory grows every iteration (`torchmemlint verify` reports `confirmed-growth`).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule, explained
from torchmemlint.rules.edits import call_method, used_only_as_number, without_graph
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.flow import TENSOR, SelfAssignment
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.loop_carried import UPDATE
from torchmemlint.semantics.prescreen import ACCUMULATION, CALL_STORE, IN_PLACE_WRITE, LIST_STORE, SUBSCRIPT_STORE
from torchmemlint.semantics.stores import Accumulation, Store
from torchmemlint.semantics.vocabulary import CALLBACK_METHOD

# ``total = loss if total is None else total + loss``, ``tuple(map(sum, zip(total, losses)))``:
# the first step's value is kept as it is too, and a tuple of totals has no ``.detach()``.
NOT_A_SUM = "no automatic fix: the total is set or combined by more than a sum (detach what each step adds)"


class GraphRetainedAccumulation(Rule):
    code = "TML001"
    name = "graph-retained-accumulation"
    message = "graph-attached value kept across iterations; store `.item()` or `.detach()` instead"
    triggers = ("append", "extend", "insert", "+=", "-=", "*=", "=", ".add(", "push", "put")

    needs_steps = True
    keeping = frozenset({CALL_STORE, SUBSCRIPT_STORE, LIST_STORE, ACCUMULATION, IN_PLACE_WRITE})

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        updated: Optional[set[cst.CSTNode]] = None  # (the chains are a whole-file analysis: asked only
        # when a callee keeps what a call gives it)
        for store in model.stores.stores():
            if store.inside is not None and updated is None:
                # (a callee's running statistic that reads its own old value is TML005's, where it is updated)
                updated = {carry.site for carry in model.loop_carried.chains if carry.kind == UPDATE}
            if store.device_only or model.stores.never_grows(store) or updated and store.inside in updated:
                continue
            finding = _finding(model, store.node, store.container, store.value, store.inside,
                               made_at=store.inside if store.made_inside else None)
            if finding is None or _kept_for_backward(model, store.node, store.container,
                                                     stored=None if store.made_inside else store.value):
                continue  # (asked second: most stored values hold no graph, and this is the costlier question)
            finding.fix, finding.no_fix = _store_fix(model, store)
            summed = _callee_sum(model, store)
            if summed is not None and (finding.fix is None or _is_callback(model, summed)):
                # ``self._track_losses(outputs)`` whose body does ``self.total += outputs.loss``: the
                # call cannot be fixed (``outputs`` is a record), the callee's sum can. A callback
                # (``hook.on_batch_end(self, batch, results, loss)``) is handed the live loss by
                # design, for every hook alike: the one that sums it is where to convert it.
                fix, no_fix = _accumulation_fix(model, summed)
                if fix is not None or _is_callback(model, summed):
                    finding = _moved_into_callee(model, finding, summed, store)
                    finding.fix, finding.no_fix = fix, no_fix
            yield finding
        for accumulation in model.stores.accumulations():
            finding = _finding(model, accumulation.node, accumulation.target, accumulation.value)
            if finding is not None and not _kept_for_backward(model, accumulation.node, accumulation.target,
                                                              accumulation.value):
                finding.fix, finding.no_fix = _accumulation_fix(model, accumulation)
                yield finding
        for write in model.loop_carried.in_place_writes:
            # ``total.add_(loss)``, ``losses[slot] = loss`` into a preallocated tensor read only as numbers
            if not write.accumulates or _kept_for_backward(model, write.site, write.target, write.value):
                continue
            finding = _finding(model, write.site, write.target, write.value, holds_graph=True)
            if finding is not None:
                finding.fix, finding.no_fix = _detach_fix(model, write.value, write.site, tensor_operand=True)
                yield finding


def _finding(model: SemanticModel, node: cst.CSTNode, container: cst.BaseExpression, value: cst.BaseExpression,
             inside: Optional[cst.CSTNode] = None, made_at: Optional[cst.CSTNode] = None,
             holds_graph: bool = False) -> Optional[Finding]:
    """A finding when ``value``, stored into ``container`` at ``node``, holds a graph and the
    container outlives the step iteration (not a loop over layers inside one forward).
    ``made_at``: ``value`` is an expression of the callee, read there; ``holds_graph``: known
    already (an in-place write's value)."""
    iteration = model.iterations.step_iteration(node)
    if iteration is None or not model.stores.outlives(container, node, iteration):
        return None
    held = model.flow.value(value, made_at or node)
    if not (held.graph or holds_graph):
        return None
    why = list(held.why)
    if inside is not None:
        why.append((inside, f"kept there by `{_callee_name(node)}()`"))
    message, related = explained(GraphRetainedAccumulation.message, why)
    # (``losses.append(\n    F.log_softmax(...)[...]\n)``: reported on the line that keeps it)
    opens_a_line = isinstance(node, cst.Call) and isinstance(node.whitespace_before_args, cst.ParenthesizedWhitespace)
    return Finding(node if opens_a_line else value, message=message, related=related, iteration=iteration)


def _callee_sum(model: SemanticModel, store: Store) -> Optional[Accumulation]:
    """The callee's own accumulation through which ``store`` keeps the argument or a member of it
    (``self.total += outputs.loss``, ``self.sums[k] += losses["lm"]``, ``self._train_loss += loss * n``)."""
    if store.inside is None or store.made_inside:
        return None
    summed = model.stores.accumulation_at(store.inside)
    if summed is None or not isinstance(summed.value, (cst.Attribute, cst.Subscript)) and \
            not _is_callback(model, summed):
        return None
    return summed


def _is_callback(model: SemanticModel, summed: Accumulation) -> bool:
    """The accumulation is in a callback method (``on_batch_end``), which a framework calls."""
    method = model.scopes.function_of(summed.node)
    return method is not None and model.scopes.class_of(method) is not None and \
        CALLBACK_METHOD.match(method.name.value) is not None


def _moved_into_callee(model: SemanticModel, finding: Finding, summed: Accumulation, store: Store) -> Finding:
    """The finding reported where the callee adds the member, the call in its why-path."""
    why = [*model.flow.value(store.value, store.node).why,
           (store.node, f"handed to `{_callee_name(store.node)}()`")]
    message, related = explained(GraphRetainedAccumulation.message, why)
    return Finding(summed.value, message=message, related=related, iteration=finding.iteration)


def _callee_name(call: cst.CSTNode) -> str:
    func = call.func if isinstance(call, cst.Call) else None
    return (func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func) if func is not None else None) \
        or "the callee"


def _kept_for_backward(model: SemanticModel, node: cst.CSTNode, container: cst.BaseExpression,
                       value: Optional[cst.BaseExpression] = None, stored: Optional[cst.BaseExpression] = None) -> bool:
    """Values kept to be differentiated later are intended: ``total = total + loss`` then
    ``total.backward()``, log-probabilities stacked into a REINFORCE loss, or a container
    returned to a caller that does the backward — unless it is evaluation code's: a container of
    a model's outputs (``stored``), or a total of losses, handed back for use, not for a backward."""
    name = dotted_name(container) if not isinstance(container, cst.Subscript) else dotted_name(container.value)
    if name is None:
        return False
    scope = model.scopes.scope_of(node)
    if value is not None and any(model.calls.is_differentiated(n) for n in model.tree.descendants(value, cst.Name)):
        return False  # the added loss is differentiated itself: the sum can only be a metric
    if name in model.calls.names_feeding_backward(scope) and name != "self":  # (``self`` feeds every method call)
        return True
    if isinstance(scope, cst.FunctionDef) and model.calls.results_differentiated(scope) and any(
            name in model.calls.names_keeping_graph(ret.value) for ret in model.scopes.scope_nodes(scope, cst.Return)
            if ret.value is not None):
        return True  # (``return torch.stack(rewards)`` to callers that each build a loss of it and differentiate it)
    iteration = model.iterations.step_iteration(node)
    if isinstance(iteration, cst.FunctionDef) and (feedbacks := model.iterations.feedbacks(iteration, name)):
        # ``score = loop_body(x, score)``: the total is handed back only to be handed in again,
        # kept for a backward only if it is where the caller's loop keeps it (``step_iteration(site)``
        # is that loop: no further feedback), what is added being what evaluation code would add
        return any(_kept_for_backward(model, site, target, value, stored) for site, target in feedbacks)
    returned = any(
        name in _returned_names(ret.value) for ret in model.scopes.scope_nodes(scope, cst.Return) if ret.value
    ) and not (isinstance(scope, cst.FunctionDef) and model.stores.returned_only_detached(scope, name))
    # A loop that already runs its backward every step has no reason to hand graphs back, nor
    # has evaluation code a total of losses (``total += criterion(out, y)`` after ``model.eval()``,
    # in a function with no backward) or a list of a model's outputs: values for use, not for a backward.
    return returned and not _backward_in_iteration(model, node) and not (
        model.scopes.sets_eval_mode(scope) and (
            stored is not None and _model_outputs(model, stored, node) or
            value is not None and stored is None and not model.calls.backwarded_names(scope)))


def _model_outputs(model: SemanticModel, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """``value``'s graph was made by running a model (not a loss function, whose result may be
    a record of numbers)."""
    origin = next((node for node, _ in model.flow.value(value, at).why), None)
    return isinstance(origin, cst.Call) and model.calls.is_forward_pass(origin) and \
        not model.calls.is_loss_function_call(origin)


def _backward_in_iteration(model: SemanticModel, node: cst.CSTNode) -> bool:
    iteration = model.iterations.step_iteration(node)
    if iteration is None:
        return False
    body = iteration if isinstance(iteration, cst.FunctionDef) else iteration.body
    return any(model.calls.backward_roots(call) for call in model.tree.descendants(body, cst.Call)) or \
        (not isinstance(iteration, cst.FunctionDef) and model.iterations.trains_through_calls(iteration))


def _returned_names(value: cst.BaseExpression) -> set[str]:
    """``return total`` / ``return a, b`` / ``return {"loss": total}``: the names handed back."""
    if isinstance(value, (cst.Tuple, cst.List)):
        elements = [e.value for e in value.elements]
    elif isinstance(value, cst.Dict):
        elements = [e.value for e in value.elements if isinstance(e, cst.DictElement)]
    else:
        elements = [value]
    return {n for n in map(dotted_name, elements) if n is not None}


def _store_fix(model: SemanticModel, store: Store) -> tuple[Optional[NodeFix], str]:
    """``.item()`` for a scalar loss kept in a list whose elements are only ever used as numbers
    (logged, summed, averaged, plotted): the list then holds floats and nothing of the graph.
    Else the value without its graph (``.detach()`` by what it holds), where elements are later
    used as tensors (``torch.stack(losses)``, ``l.item() for l in losses``). Both change what the
    container holds: unsafe. What a callee made is detached where the callee keeps it."""
    if store.made_inside:
        return _detach_fix(model, store.value, store.inside)
    if model.stores.differentiated_later(store.container):
        return None, ("no automatic fix: a backward later differentiates what the container holds, so its "
                      "elements need their graphs; empty it after that backward instead")
    if _is_scalar(model, store.value, store.node) and not (store.inside is not None and store.appended) and \
            _elements_used_only_as_numbers(model, store.container):
        # (not into a callee's list: how the callee uses its elements, ``torch.stack(self._values)``,
        # is not seen from here)
        return _item_fix(store.value, safe=False), ""
    # ``buffer[t] = value`` into a tensor writes it in place: it is a tensor operand.
    into_tensor = isinstance(store.node, cst.Assign) and model.flow.value(store.container, store.node).kind == TENSOR
    return _detach_fix(model, store.value, store.node, stored_in=store.container, tensor_operand=into_tensor)


def _detach_fix(model: SemanticModel, value: cst.BaseExpression, at: cst.CSTNode,
                stored_in: Optional[cst.BaseExpression] = None, tensor_operand: bool = False) \
        -> tuple[Optional[NodeFix], str]:
    new, why_not = without_graph(model, value, at, stored_in=stored_in, tensor_operand=tensor_operand)
    if new is None:
        return None, why_not
    return NodeFix("store it without its graph (`.detach()`)", safe=False, replacements=[Replacement(value, new)]), ""


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
    uses = model.scopes.name_uses(scope)
    return name not in uses.torch_arguments and name not in uses.item_attribute_receivers and \
        not uses.element_names.get(name, frozenset()) & uses.attribute_receivers


def _item_fix(value: cst.BaseExpression, safe: bool) -> NodeFix:
    return NodeFix("keep the Python number (`.item()`)", safe=safe,
                   replacements=[Replacement(value, call_method(value, "item"))])


def _accumulation_fix(model: SemanticModel, accumulation: Accumulation) -> tuple[Optional[NodeFix], str]:
    """``.item()`` for a scalar accumulated into a name that starts as a Python number: safe when
    the total is only ever used as a number afterwards, unsafe when it escapes (returned, printed
    as is, stored); else the value without its graph (the accumulator may be a tensor on
    purpose)."""
    value = accumulation.value
    target = accumulation.target
    if isinstance(accumulation.node, cst.Assign) and not isinstance(accumulation.node.value, cst.BinaryOperation):
        return None, NOT_A_SUM
    scope = model.scopes.scope_of(accumulation.node)
    number_total = False
    if isinstance(target, cst.Name):
        starts = [b for b in model.scopes.bindings(scope).get(target.value, [])
                  if not b.augmented and b.node is not accumulation.node]
        number_total = bool(starts) and all(isinstance(b.value, (cst.Integer, cst.Float)) for b in starts)
        if number_total and _is_scalar(model, value, accumulation.node):
            return _item_fix(value, safe=used_only_as_number(model, target.value, scope, exclude=accumulation.node)), ""
    elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        # ``self.total += v`` where every other assignment of ``self.total`` in the class is a number
        cls = model.scopes.self_class(model.scopes.function_of(accumulation.node))
        starts = [a for a in (model.flow.self_assignments(cls).get(target.attr.value, []) if cls else [])
                  if a.node is not accumulation.node and not isinstance(a.node, cst.AugAssign)]
        number_total = bool(starts) and all(isinstance(_assigned_part(a), (cst.Integer, cst.Float)) for a in starts)
    elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
        number_total = _holds_numbers(model, target.value, accumulation.node)
        if number_total and _is_scalar(model, value, accumulation.node):
            # ``running[name] += loss_value`` into ``defaultdict(float)``: a number per component
            # (unsafe: the dict's values become floats, which is what its callers see).
            return _item_fix(value, safe=False), ""
    # Added with its graph to a Python number or into a tensor, the value is a tensor (a number
    # holds no graph, and neither takes a container); maybe of several elements: ``.detach()``.
    into_tensor = model.flow.value(target, accumulation.node).kind == TENSOR
    fix, no_fix = _detach_fix(model, value, accumulation.node, tensor_operand=number_total or into_tensor)
    if fix is not None and isinstance(target, cst.Name):
        # ``if total is None: total = loss``: the first value joins the total with its graph too
        for start in model.scopes.bindings(scope).get(target.value, []):
            if start.value is None or start.augmented or not model.scopes.gives_first_value(start.node, target.value) \
                    or not model.flow.value(start.value, start.node).graph:
                continue
            detached, why_not = without_graph(model, start.value, start.node, tensor_operand=True)
            if detached is None:
                return None, why_not
            fix.replacements.append(Replacement(start.value, detached))
    return fix, no_fix


def _assigned_part(assignment: SelfAssignment) -> cst.BaseExpression:
    """What one target of ``self.a, self.b = 0.0, 0.0`` gets (the whole value for one target)."""
    value = assignment.value
    if assignment.position is not None and isinstance(value, (cst.Tuple, cst.List)) and \
            assignment.position < len(value.elements):
        return value.elements[assignment.position].value
    return value


_NUMBER_TYPES = frozenset({"float", "int"})


def _holds_numbers(model: SemanticModel, container: cst.Name, at: cst.CSTNode) -> bool:
    """Every binding of ``container`` in the scope of ``at`` makes a dict of Python numbers:
    ``defaultdict(float)``, ``{"ce": 0.0, "reg": 0.0}``, ``dict.fromkeys(names, 0.0)``."""
    starts = [b for b in model.scopes.bindings(model.scopes.scope_of(at)).get(container.value, []) if not b.augmented]
    return bool(starts) and all(_numbers_dict(model, b.value) for b in starts)


def _numbers_dict(model: SemanticModel, value: Optional[cst.BaseExpression]) -> bool:
    if isinstance(value, cst.Dict):
        return bool(value.elements) and all(isinstance(e, cst.DictElement) and isinstance(e.value, (cst.Integer, cst.Float))
                                            for e in value.elements)
    if not isinstance(value, cst.Call) or not value.args:
        return False
    callee = model.imports.qualify(value.func) or model.code(value.func)
    first = value.args[0].value
    if callee == "collections.defaultdict":
        return isinstance(first, cst.Name) and first.value in _NUMBER_TYPES
    if callee == "dict.fromkeys":
        return len(value.args) == 2 and isinstance(value.args[1].value, (cst.Integer, cst.Float))
    return False


def _is_scalar(model: SemanticModel, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Surely a one-element tensor, so that ``.item()`` cannot fail on it (and is no float already)."""
    value = model.flow.value(expr, at)
    return value.kind == TENSOR and value.scalar
