"""TML004 device-tensor-in-growing-container.

## What it does
Flags a tensor that lives on an accelerator (a model output, a `.cuda()`/`.to(device)` result,
a factory with `device=`) appended to a container that outlives the loop — typically the
predictions of a whole validation set collected on the GPU — when it is not graph-attached (that
case is TML001) and not moved off the device with `.cpu()`, `.item()` or `.tolist()`; also when
the append happens inside a method of a helper object of the same file (`collector.update(preds)`
where `update` does `self.preds.append(preds)`). An item assignment grows a dict when its key comes from the step's data
(`results[sample_id] = score` over `zip(ids, scores)`), not when it comes from a fixed set of
names (`latest[name] = value` over `metrics.items()`), nor when it writes a position of a
preallocated buffer (`rollout.rewards[step] = r` for `step` in `range(n)`: a tensor or a list
never grows by item assignment). A model moved to the device and kept in such a
container (one per hyper-parameter trial or cross-validation fold) is flagged with its own message.

## Why is this bad?
Each iteration adds one batch's outputs to GPU memory for the rest of the loop: live device
memory grows with the number of iterations, and a large evaluation set runs out of memory at the
end of the epoch even though every step fits.

## Example
```python
preds = []
with torch.no_grad():
    for x, _ in val_loader:
        preds.append(model(x.to(device)).argmax(1))
```

## Use instead
```python
        preds.append(model(x.to(device)).argmax(1).cpu())
```
A Lightning `self.validation_step_outputs.append(...)` that another hook clears every epoch is
the documented pattern and stays silent; one that no hook clears is flagged even when it holds
only losses, since it then grows for the whole run. Otherwise loss values stay silent
(`losses.append(loss.detach())`, `accelerator.gather_for_metrics(loss.repeat(bs))`): one small
block per step, kept on the device on purpose, because `.item()` every step would wait for the
GPU. Also silent: containers named as
caches (`latents_cache`, kept on the device on purpose behind an option like `--cache_latents`),
a rollout's storage (filled by a loop that steps an environment, made and returned, or reset
before the loop, by the same function; or a memory object whose own method the update calls to
rebind its lists: `self.memory.clear()`), one step's micro-batches (a loop that runs backward
passes for a caller that steps the optimizer once per call, into a list the function makes on
each call), the inputs of one call of an inference pipeline's method (`DiffusionPipeline`), and
item writes into a preallocated tensor.

## Fix safety
The fix stores `.detach().cpu()` of what the value flow knows to be a tensor (element by element
for a tuple or dict written out, `{key: tensor.detach().cpu() for key, tensor in d.items()}` for
a dict of tensors); a value whose type is not known gets no fix, nor does a model (what to keep
of it is the author's call). It is **safe** where the
container only ever feeds host-side consumers — a metric library (`sklearn.metrics.f1_score(labels,
preds)`), numpy or scipy, `len()`, or `torch.cat(preds)` whose result goes on to `.cpu()`,
`.numpy()`, `.tolist()` or `.item()` — because those see the same numbers on the host either way.
Elsewhere it is **unsafe**: later code that combines the stored tensors with device tensors would
fail or move data.

A value handed to a method of the file that keeps it gets no fix where the call's result is used
(`fake = pool.draw(batch)`): the method may return what it keeps, and the caller would get it
on the CPU.

## Runtime signature
Live device memory grows with the number of iterations (`confirmed-growth`).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import without_graph
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.flow import MODULE, RECORD, Value
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.prescreen import CALL_STORE, LIST_STORE, SUBSCRIPT_STORE
from torchmemlint.semantics.scopes import root_name
from torchmemlint.semantics.vocabulary import PER_EPOCH_METHOD, names_a_cache

MODULE_MESSAGE = ("{what} on the device kept in a container that grows every iteration (one per trial or "
                  "fold): every one's parameters, and whatever its optimizer state and closures hold, stay on "
                  "the device; keep its `state_dict()` on the CPU, or only its metrics")
SCALARS_ON_SELF_MESSAGE = ("device scalars kept in a list on `self` that no hook empties: one device block per "
                           "step for the whole run; empty it at the end of each epoch (`.clear()` in "
                           "`on_<stage>_epoch_end`), or store `.item()`")
MODULE_NO_FIX = "no automatic fix: what to keep of each model (weights on the CPU, a score) is the author's call"
USED_RESULT_NO_FIX = ("no automatic fix: the call's result is used, and the method may return what it keeps "
                      "(moved to the CPU, it would reach the caller there); store a `.cpu()` copy inside the method")


class DeviceTensorInGrowingContainer(Rule):
    code = "TML004"
    name = "device-tensor-in-growing-container"
    message = "device tensor kept in a container that grows every iteration; store `.cpu()` (or `.item()`) instead"
    triggers = ("append", "extend", "insert", "+=", "push", "put", "=")

    needs_steps = True
    keeping = frozenset({CALL_STORE, LIST_STORE, SUBSCRIPT_STORE})

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        reported = set()
        stores = list(model.stores.stores())
        # (each argument once, however many of the callee's containers keep it)
        kept_by_call: dict[cst.CSTNode, dict[cst.BaseExpression, None]] = {}
        # Where a callee keeps a value computed from a graph-attached argument and a device one
        # (``self.history.append((per_sample ** 2).sum())`` of ``outputs`` and ``labels``), what it
        # keeps holds a graph: TML001's.
        graph_kept_at = set()
        for store in stores:
            if store.inside is not None and not store.host:
                kept_by_call.setdefault(store.node, {})[store.value] = None
                if store.computed and not store.device_only and model.flow.value(store.value, store.node).graph:
                    graph_kept_at.add((store.node, store.inside))
        for store in stores:
            if store.computed and (store.node, store.inside) in graph_kept_at:
                continue
            if store.node in reported or store.made_inside or store.host or store.joined or store.by_metric:
                # One finding per call (``buffer.push(obs, action, value)``), not per argument; a graph a
                # callee made and kept is TML001's; what it moves to the host first is on no device;
                # what it joins onto a tensor grows there (TML008's); a torchmetrics metric keeps its
                # inputs on the device by design, until ``reset()``.
                continue
            iteration = model.iterations.step_iteration(store.node)
            if iteration is None:
                continue
            if not store.appended or model.stores.never_grows(store) or model.stores.writes_position(store) or \
                    model.stores.capped(store):
                continue
            func = model.scopes.function_of(store.node)
            if not isinstance(iteration, cst.FunctionDef) and model.iterations.accumulates_for_callers_step(iteration) \
                    and model.scopes.function_of(iteration) is func and \
                    root_name(store.container) in model.scopes.bindings(func):
                continue  # one step's micro-batches, in a container the function makes on each call
            if (isinstance(store.node, cst.Assign) or store.key is not None) and \
                    not model.stores.keyed_by_example(store, iteration):
                continue  # ``d[k] = v`` overwrites a bounded set of keys, unless each example brings its own
            resetters = model.stores.methods_resetting(store.container, iteration) \
                if isinstance(iteration, cst.FunctionDef) else []
            emptied_per_epoch = bool(resetters) and all(_runs_once_per_epoch(model, m) for m in resetters)
            if resetters and not emptied_per_epoch:
                continue  # (a rollout buffer emptied by the update that consumes it)
            if not isinstance(iteration, cst.FunctionDef) and func is not None and \
                    model.stores.emptied_between_calls_of(store.container, func):
                continue  # (one filled by a loop of its own method, emptied after each call of it)
            if not model.stores.outlives(store.container, store.node, iteration):
                continue
            if _rollout_returned(model, store, iteration):
                continue
            if names_a_cache(dotted_name(store.container)):
                continue  # ``latents_cache.append(...)`` behind ``--cache_latents``: kept on the device on purpose
            value = model.flow.value(store.value, store.node)
            if not value.device or value.graph and not store.device_only:
                continue  # (a graph-attached value is TML001's, unless the callee keeps it detached)
            message = None
            if emptied_per_epoch and _reduced_per_example(store.value):
                continue  # (an epoch of class indices or confidences: a few bytes an example)
            if _scalars_only(value):
                if emptied_per_epoch or not _lightning_step_outputs(model, store.container, iteration):
                    continue  # one 512-byte block per step, kept on the device on purpose (no sync)
                message = SCALARS_ON_SELF_MESSAGE  # ... but never emptied: one block per step of the whole run
            holder = _model_holder(value)
            if holder is not None and model.flow.value(store.container, store.node).kind == MODULE:
                # ``self.estimators_.append(copy.deepcopy(net))`` into an ``nn.ModuleList``: an
                # ensemble, grown on purpose
                continue
            reported.add(store.node)
            if holder is not None:
                yield Finding(store.value, message=MODULE_MESSAGE.format(what=holder), no_fix=MODULE_NO_FIX)
                continue
            related = _kept_inside(model, store)
            if store.inside is not None and not isinstance(model.tree.parent.get(store.node), cst.Expr):
                # (``fake = pool.draw(batch)``: what the callee keeps it may hand back too)
                yield Finding(store.value, message=message, no_fix=USED_RESULT_NO_FIX, related=related)
                continue
            # Every device argument the call hands to what its callee keeps moves at once (a fix of
            # ``remember(log_prob, value)`` that moved one would leave the other to flag again).
            replacements, no_fix = [], ""
            for kept in dict.fromkeys((store.value, *kept_by_call.get(store.node, ()))):
                if kept is not store.value and not _device_without_graph(model.flow.value(kept, store.node)):
                    continue
                new, no_fix = without_graph(model, kept, store.node, "cpu", stored_in=store.container)
                if new is None:
                    break
                replacements.append(Replacement(kept, new))
            fix = None if new is None else NodeFix(
                "store `.detach().cpu()`", safe=_only_host_consumers(model, store.container, store.node),
                replacements=replacements)
            yield Finding(store.value, message=message, fix=fix, no_fix=no_fix, related=related)


def _kept_inside(model: SemanticModel, store) -> list:
    """Where a callee keeps what the call hands it (``self.results.append(pred)`` in a metric's
    ``process``): the finding is at the call, the growth there."""
    function = model.scopes.function_of(store.inside) if store.inside is not None else None
    return [(store.inside, f"kept here by `{function.name.value}()`")] if function is not None else []


# Where values end up on the host whatever device they come from.
_HOST_LIBRARIES = ("sklearn.", "numpy.", "scipy.")
_TO_HOST = frozenset({"cpu", "numpy", "tolist", "item"})
_CONCATENATIONS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack",
                             "torch.hstack"})


def _only_host_consumers(model: SemanticModel, container: cst.BaseExpression, store: cst.CSTNode) -> bool:
    """Whether the local list ``container`` is read, apart from the stores into it, only by
    host-side consumers (``_HOST_LIBRARIES``, ``len``, a concatenation moved to the host): the
    stored tensors' device is then invisible."""
    if not isinstance(container, cst.Name):
        return False
    name = container.value
    scope = model.scopes.scope_of(store)
    if any(model.scopes.scope_of(n) is not scope for n in model.tree.descendants(scope, cst.Name) if n.value == name):
        return False  # read by a nested function: not followed
    reads = [n for n in model.scopes.scope_nodes(scope, cst.Name) if n.value == name and not _is_binding(model, n)]
    consumers = [read for read in reads if not _is_store_receiver(model, read)]
    return bool(consumers) and all(_host_consumer(model, read) for read in consumers)


def _is_binding(model: SemanticModel, name: cst.Name) -> bool:
    return isinstance(model.tree.parent.get(name), (cst.AssignTarget, cst.Param))


def _is_store_receiver(model: SemanticModel, name: cst.Name) -> bool:
    """``name.append(...)`` / ``name.extend(...)`` / ``name += ...``: a store, not a use."""
    parent = model.tree.parent.get(name)
    if isinstance(parent, cst.AugAssign):
        return parent.target is name
    return isinstance(parent, cst.Attribute) and parent.attr.value in ("append", "extend", "insert") and \
        isinstance(model.tree.parent.get(parent), cst.Call)


def _host_consumer(model: SemanticModel, read: cst.Name) -> bool:
    arg = model.tree.parent.get(read)
    if isinstance(arg, cst.Element):  # ``torch.cat([a, b])``: the list literal is the argument
        listed = model.tree.parent.get(arg)
        arg = model.tree.parent.get(listed) if isinstance(listed, (cst.List, cst.Tuple)) else arg
    call = model.tree.parent.get(arg) if isinstance(arg, cst.Arg) else None
    if not isinstance(call, cst.Call):
        return False
    qualified = model.imports.qualify(call.func) or ""
    if qualified.startswith(_HOST_LIBRARIES) or isinstance(call.func, cst.Name) and call.func.value == "len":
        return True
    return qualified in _CONCATENATIONS and _moved_to_host(model, call)


def _moved_to_host(model: SemanticModel, expr: cst.BaseExpression) -> bool:
    """``expr.cpu()``, ``expr.argmax(1).numpy()``, ``expr.tolist()``: a chain of method calls on
    ``expr`` that reaches the host before the value is used for anything else."""
    while True:
        attribute = model.tree.parent.get(expr)
        call = model.tree.parent.get(attribute) if isinstance(attribute, cst.Attribute) else None
        if not isinstance(call, cst.Call) or call.func is not attribute:
            return False
        if attribute.attr.value in _TO_HOST:
            return True
        expr = call


def _lightning_step_outputs(model: SemanticModel, container: cst.BaseExpression, iteration) -> bool:
    """A list on ``self`` that a LightningModule's step method fills (``self.validation_step_outputs``)
    and, as this check has found, no method empties: Lightning 2's documented pattern without its
    ``.clear()`` in ``on_validation_epoch_end``."""
    return isinstance(iteration, cst.FunctionDef) and root_name(container) == "self" and \
        model.scopes.is_lightning_module(model.scopes.class_of(iteration))


def _runs_once_per_epoch(model: SemanticModel, method: cst.FunctionDef) -> bool:
    """A framework's epoch hook (``on_validation_epoch_end``), or a method only such hooks call
    (``_reset_data`` of ``on_predict_epoch_start``): what a step method keeps until it runs is a
    whole epoch's outputs, the validation set's predictions on the device."""
    if PER_EPOCH_METHOD.match(method.name.value):
        return True
    sites = model.calls.call_sites(method)
    callers = [model.scopes.function_of(site) for site in sites]
    return bool(callers) and all(caller is not None and PER_EPOCH_METHOD.match(caller.name.value) for caller in callers) \
        or bool(sites) and all(_after_a_framework_pass(model, site) for site in sites)


# A framework's pass over a whole dataset (``trainer.predict(dataset)``), each batch one call of a step method.
_FRAMEWORK_PASSES = frozenset({"fit", "predict", "evaluate", "validate", "test"})


def _after_a_framework_pass(model: SemanticModel, site: cst.Call) -> bool:
    """``trainer.predict(dataset)`` then ``trainer.reset_stored_features()``: the reset follows the
    framework's pass over a dataset, whose every batch the step method kept."""
    if not isinstance(site.func, cst.Attribute):
        return False
    receiver = dotted_name(site.func.value)
    return receiver is not None and any(
        isinstance(call.func, cst.Attribute) and call.func.attr.value in _FRAMEWORK_PASSES and call.args
        and dotted_name(call.func.value) == receiver and model.tree.before(call, site)
        for call in model.scopes.scope_nodes(model.scopes.scope_of(site), cst.Call))


# Methods and attributes whose result holds one number per example (or fewer).
_PER_EXAMPLE_REDUCTIONS = frozenset({"argmax", "argmin", "values", "indices", "sum", "mean", "max", "min", "norm",
                                     "item", "tolist"})


def _reduced_per_example(stored: cst.BaseExpression) -> bool:
    """``outputs["scores"].softmax(-1).max(-1).values``, ``logits.argmax(-1)``: what is kept is
    reduced to a number per example (a model's outputs, features or images are not)."""
    while isinstance(stored, cst.Call) and isinstance(stored.func, cst.Attribute) and \
            stored.func.attr.value in ("detach", "clone", "float", "long"):
        stored = stored.func.value
    last = stored.func if isinstance(stored, cst.Call) else stored
    return isinstance(last, cst.Attribute) and last.attr.value in _PER_EXAMPLE_REDUCTIONS


def _device_without_graph(value: Value) -> bool:
    return value.device and not value.graph


def _scalars_only(value: Value) -> bool:
    """A loss or scalar, or a record of them (``{"loss": loss.detach(), "metrics": ...}``)."""
    if value.loss or value.scalar:
        return True
    parts = [v for _, v in value.fields or ()] + list(value.elements or ())
    return bool(parts) and (value.element is None or not value.element.device) and \
        all(_scalars_only(part) or not part.device for part in parts)


def _model_holder(value: Value) -> Optional[str]:
    """How to name what ``value`` keeps on the device when it is (or holds) a model: "model",
    or "`Trainer` object holding a model" for an object of the file's classes (in a tuple, too)."""
    if value.kind == MODULE:
        return "model"
    if value.kind == RECORD and value.cls is not None and value.device:
        return f"`{value.cls}` object (and the model it holds)"
    for element in value.elements or ():
        found = _model_holder(element)
        if found is not None:
            return found
    return None


def _rollout_returned(model: SemanticModel, store, iteration) -> bool:
    """A rollout: the loop steps an environment and fills a container that the same function
    makes and hands back (``return batch``), or makes anew for each rollout and updates from (in
    every loop around this one: consumed before it dies with the call), or empties before the loop
    (``buffer.reset()``): one rollout's worth, kept on purpose."""
    if isinstance(iteration, cst.FunctionDef) or not model.scopes.steps_environment_in(iteration):
        return False
    func = model.scopes.function_of(store.node)
    root = root_name(store.container)
    if func is None or root is None:
        return False
    emptied = any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("reset", "clear")
                  and dotted_name(c.func.value) == dotted_name(store.container) and model.tree.before(c, iteration)
                  for c in model.scopes.scope_nodes(func, cst.Call))
    if emptied:
        return True
    local = model.scopes.bindings(func).get(root)
    if not local:
        return False
    if model.scopes.returns_name(func, root):
        return True
    # A list of the call's own, filled by a loop that does not train, for the update that follows
    # it in the same call, and made again around every loop around it: consumed once the rollout
    # is complete.
    return store.inside is None and isinstance(store.container, cst.Name) and \
        not any(isinstance(b.node, cst.Param) for b in local) and bool(model.iterations.step_calls(func)) and \
        not model.iterations.runs_step(iteration) and not model.iterations.trains_through_calls(iteration) and \
        all(any(model.tree.contains(loop, b.node) for b in local) for loop in model.scopes.loops_around(iteration))
