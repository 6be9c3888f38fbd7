"""TML003 eval-without-no-grad.

## What it does
Flags a forward pass in an evaluation context — after `model.eval()` (or `model.train(False)`)
in the same scope or the function around a closure, with no later `.train()`, in a loop over a validation/test loader, or in a function named like
`evaluate`/`validate`/`test`/`predict`/`infer` that loops over data, or in a helper of the file
that only such code calls (`score_batch(model, batch)` in the validation loop) — with no
`.backward()` and no grad-disabled context (`torch.no_grad()`, `torch.inference_mode()`, a
decorated function, or callers that already disable grad). Calling an attribution method made
from the model (guided backprop, Grad-CAM, saliency, integrated gradients) is not a plain
forward pass: it differentiates the model. A teacher or frozen submodule switched to eval mode
(`self.teacher.eval()`, or through a local name for it) says nothing of the other calls of the
method, nor does a model's own method that puts a submodule in eval mode (`self.target.eval()` in
`forward`: grad mode is its caller's business), unless the method switches the model itself to
eval mode and back (`self.eval()` ... `self.train()`) and the file calls it with grad on: then it
is an evaluation helper of the training code. A helper of the file that runs the model and that
training code also calls (`self.infer(x)`) is a forward pass where evaluation code calls it, also
an epoch helper shared with training whose backward the call's literal arguments skip
(`run_epoch(model, val_loader, train=False)`, or its `optimizer` left to a `None` default), also
where it hands that argument on to the step function it calls; a
call whose model calls all run under `no_grad` inside it (an object whose `__call__` wraps
`torch.no_grad()`) is not, nor is a model frozen earlier in the same scope
(`sampler.eval().requires_grad_(False)`: no parameter requires grad, so no graph is recorded).
A function that trains and then evaluates (`loss.backward(); optimizer.step(); model.eval();
out = model(x)`, every backward and step before the switch) is reported at the forward after the
switch, without an automatic fix (the function also trains). Test bodies in test files (`test_*`,
and the `_test_*` bodies their tests share) check behaviour: they are not evaluation code.

## Why is this bad?
`model.eval()` only switches dropout and batch-norm behaviour; it does **not** stop autograd.
Every forward pass still records its graph and saves its activations for a backward that never
comes: the peak of each evaluation step is as high as a training step's, and if the outputs are
kept (`preds.append(out)`), memory grows with the evaluation set.

## Example
```python
model.eval()
for x, y in val_loader:
    out = model(x)
    correct += (out.argmax(1) == y).sum().item()
```

## Use instead
```python
model.eval()
with torch.no_grad():
    for x, y in val_loader:
        out = model(x)
        correct += (out.argmax(1) == y).sum().item()
```

## Fix safety
The fix wraps the evaluation loop in `with torch.no_grad():` (or decorates the evaluation
function with `@torch.no_grad()`), spelling `torch` as the file does and adding `import torch`
if needed. It is **safe** when nothing in the wrapped code asks autograd for anything — no
`.backward()`, `torch.autograd.grad`, optimizer step, `.grad`, `.grad_fn`, `.requires_grad`,
`requires_grad_()` or `enable_grad`/`set_grad_enabled` — since then only memory changes;
otherwise it is **unsafe** (code that relied on gradients there would break). A file where
`torch` names something else (`import numpy as torch`) gets no fix, nor does module-level code
without a loop to wrap, nor code that calls a function of the file running a backward or
`torch.autograd.grad` (wrapped in `no_grad`, that call would fail).

## Runtime signature
A higher peak every iteration (`confirmed-peak-excess`); growth when outputs are kept.
"""
from __future__ import annotations

import re
from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import TORCH_NAME_TAKEN, torch_name_taken, torch_spelling, with_torch_import
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.params import marks_requiring_grad
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.scopes import (Loop, Scope, first_param, is_false, is_step_call, iterable_identifiers, module_itself,
                                          to_eval_mode)
from torchmemlint.semantics.vocabulary import EVAL_FUNCTION, LOADER_ITERABLE, PER_STEP_METHODS

_EVAL_ITERABLE = re.compile(r"^(?:val|valid|validation|test|testing|eval|evaluation|dev|holdout)(?:_|$|loader|set|data)",
                            re.IGNORECASE)


class EvalWithoutNoGrad(Rule):
    code = "TML003"
    name = "eval-without-no-grad"
    message = "forward pass in evaluation code without torch.no_grad()/inference_mode(); activations are kept for a backward that never comes"
    triggers = ("eval", "val", "test", "predict", "infer", "embed", "train(False", "train(mode=False")

    def could_match(self, facts: FileFacts) -> bool:
        # An evaluation context (``_evaluation_context``): a loop over evaluation data, a
        # function named like evaluation that calls something in a loop or that is called in
        # one, or a model switched to eval mode before another call of the same scope.
        return super().could_match(facts) and (
            facts.eval_mode_then_call
            or any(EVAL_FUNCTION.search(name) for name in facts.functions_calling_in_loops)
            or any(EVAL_FUNCTION.search(name) and any(site[0] for site in facts.call_sites.get(name, ()))
                   for name in facts.function_names)
            or any(_EVAL_ITERABLE.search(word) for name in facts.for_iterable_identifiers for word in _components(name))
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        reported: set[cst.CSTNode] = set()
        helpers: dict[tuple[cst.FunctionDef, int], bool] = {}
        for call in model.tree.nodes(cst.Call):
            if not (model.calls.is_forward_pass(call) or _runs_forward_in_helper(model, call, helpers)) or \
                    _is_loss_call(model, call):
                continue
            context = _evaluation_context(model, call, helpers)
            if context is None or context in reported:
                continue
            if model.grad.is_disabled(call) or _runs_without_grad(model, call) \
                    or _frozen_before(model, call) or _stateless_module_on_detached_inputs(model, call):
                continue
            if not _has_backward(model, context):
                fix, no_fix = _no_grad_fix(model, context)
            elif _evaluates_after_its_steps(model, context, call):
                fix, no_fix = None, "no automatic fix: the function also trains; run the code after `.eval()` " \
                                    "under `with torch.no_grad():`"
            else:
                continue
            reported.add(context)
            yield Finding(call, fix=fix, no_fix=no_fix)


def _evaluates_after_its_steps(model: SemanticModel, context: cst.CSTNode, call: cst.Call) -> bool:
    """A function that trains and then evaluates (``loss.backward(); optimizer.step();
    model.eval(); output = model(x)``): every backward and optimizer step of it comes before the
    switch to eval mode that precedes ``call``, so the forward after it is evaluation."""
    switch = _eval_switch_before(model, context, call) if isinstance(context, (cst.FunctionDef, cst.Module)) else None
    return switch is not None and not any(
        (model.calls.backward_roots(other) or is_step_call(other) or marks_requiring_grad(other))
        and not model.tree.before(other, switch) for other in model.tree.descendants(context, cst.Call))


def _stateless_module_on_detached_inputs(model: SemanticModel, call: cst.Call) -> bool:
    """``scorer(volume_pred, volume_mask)`` where ``scorer`` is built from a module class of this
    file that keeps nothing on ``self`` (no parameters: a Dice loss written as an ``nn.Module``)
    and no input is known to hold a graph (predictions made under ``no_grad``, data): its forward
    records nothing."""
    classes = [model.scopes.classes_by_name.get(name.rpartition(".")[2])
               for name in model.scopes.classes_built_into(call.func, call)] if isinstance(call.func, cst.Name) else []
    if not classes and isinstance(call.func, cst.Name):  # ``dice(pred, mask)``, ``dice`` a parameter named for ``SoftDice``
        classes = [named] if (named := model.calls.class_named_for(call.func, call)) is not None else []
    elif not classes and isinstance(call.func, cst.Attribute):  # ``self.dice(...)``, stored from that parameter
        classes = [named] if (named := model.calls.stored_parameter_class(call.func, call)) is not None else []
    return bool(classes) and all(
        cls is not None and all(base in ("nn.Module", "torch.nn.Module") for base in model.scopes.class_bases(cls))
        and not any(isinstance(t.target, cst.Attribute) and dotted_name(t.target.value) == "self"
                    for assign in model.tree.descendants(cls, cst.Assign) for t in assign.targets)
        for cls in classes) and bool(call.args) and all(
        not model.flow.value(arg.value, call).graph for arg in call.args)


# TorchScript passes that fold a module's parameters into constants.
_FREEZING = frozenset({"torch.jit.freeze", "torch.jit.optimize_for_inference"})


def _frozen_before(model: SemanticModel, call: cst.Call) -> bool:
    """The model ``call`` runs was frozen earlier in the same scope (``sampler.eval()
    .requires_grad_(False)``, ``f = torch.jit.freeze(f.eval())``), or, for a parameter, before
    every call of the function that hands it in (through helpers handing it on: ``text_encoder``
    frozen in ``main`` and run three helpers down): with no parameter requiring grad, its forward
    records no graph (inputs marked for gradients aside, which evaluation code does not make)."""
    return _frozen_module(model, call.func, call, 0)


def _frozen_module(model: SemanticModel, module: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
    if _frozen_at(model, module, at):
        return True
    function = model.scopes.function_of(at)
    if depth > 3 or not isinstance(module, cst.Name) or function is None or \
            not model.scopes.is_parameter(module.value, at):
        return False
    given = model.calls.given_by_every_caller(function, module.value)
    return bool(given) and all(_frozen_module(model, expr, site, depth + 1) for expr, site in given)


def _frozen_at(model: SemanticModel, module: cst.BaseExpression, at: cst.CSTNode) -> bool:
    spelled = dotted_name(module)
    if spelled is None:
        return False
    if isinstance(module, cst.Name) and any(
            isinstance(b.value, cst.Call) and model.imports.qualify(b.value.func) in _FREEZING
            for b in model.scopes.reaching_bindings(module.value, at)):
        return True  # ``f = torch.jit.freeze(f.eval())``: its parameters are constants now
    scope = model.scopes.scope_of(at)
    for other in model.scopes.scope_nodes(scope, cst.Call):
        func = other.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" and other.args
                and is_false(other.args[0].value) and model.tree.before(other, at)):
            continue
        if dotted_name(module_itself(func.value)) == spelled:  # (``sampler.eval().requires_grad_(False)``)
            return True
    return False


def _runs_without_grad(model: SemanticModel, call: cst.Call) -> bool:
    """A call of the file's code (a function, an object's ``__call__``) whose model calls all run
    with grad off inside it (``fi_model(images)`` whose ``__call__`` wraps ``torch.no_grad()``)."""
    callee = model.calls.callee(call)
    function = callee.function if callee is not None else None
    if not isinstance(function, cst.FunctionDef) or callee.constructs is not None:
        return False
    if model.grad.is_function_disabled(function):
        return True
    forwards = [c for c in model.scopes.scope_nodes(function, cst.Call) if model.calls.is_forward_pass(c)]
    return bool(forwards) and all(model.grad.is_disabled(c) for c in forwards)


def _runs_forward_in_helper(model: SemanticModel, call: cst.Call, helpers: dict, depth: int = 0,
                            known: Optional[dict] = None) -> bool:
    """A call of a helper of the file that runs a model with grad on and never differentiates
    (``self.infer(x)`` returning ``self.module_(x)``), and that training code calls too: a
    forward pass, seen from the caller. (A helper only evaluation calls is reported inside.)
    Branches the call's literal arguments rule out do not run (``run_epoch(loader, train=False)``
    skips its backward). The model may run one helper further, when no helper reached runs a
    backward."""
    callee = model.calls.callee(call)
    function = callee.function if callee is not None else None
    if not isinstance(function, cst.FunctionDef) or model.grad.is_function_disabled(function):
        return False
    key = (function, 0)
    if key not in helpers:
        helpers[key] = False
        helpers[key] = _only_called_to_evaluate(model, function, helpers, 0)
    if helpers[key]:
        return False
    known_here = model.calls.known_parameters(call, callee, known)
    calls = model.calls.calls_that_run(function, known_here)
    if any(model.calls.backward_roots(c) for c in calls):
        return False
    # (a loss function alone, ``F.mse_loss(Z, y)`` in a metric's ``update``, records a graph only
    # from inputs that hold one: the model call that made them is the forward pass)
    if any(model.calls.is_forward_pass(c) and not _is_loss_call(model, c) and not model.grad.is_disabled(c)
           and not _runs_without_grad(model, c) and not _frozen_before(model, c) for c in calls):
        return True
    if depth > 1 or depth == 0 and not known_here and isinstance(call.func, cst.Attribute) and \
            dotted_name(call.func.value) == "self":
        # (an object's own chain of helpers, ``self.encode_decode(crop)`` of a segmentor's sliding
        # inference, is its forward machinery: where its callers evaluate, they are reported)
        return False
    # A helper of the file one call further, when no helper it calls reaches a backward
    # (``embedder.get_z_mean(batch)`` pooling what ``self.get_z`` gets from ``self.cpc(tokens)``;
    # ``run_epoch`` handing ``optimizer=None`` on to ``compute_step``, which then skips its step)
    nested = [(c, _backwards_given(model, c, known_here)) for c in calls if not model.grad.is_disabled(c)]
    return not any(run for _, (run, _) in nested) and \
        any(_runs_forward_in_helper(model, c, helpers, depth + 1, known_here) for c, _ in nested)


def _backwards_given(model: SemanticModel, call: cst.Call, known: dict) -> tuple[bool, bool]:
    """Whether the helper of the file that ``call`` runs reaches a backward, and whether it has
    one that the arguments, given what the caller knows of those it hands on, switch off."""
    callee = model.calls.callee(call)
    if callee is None or not isinstance(callee.function, cst.FunctionDef):
        return False, False
    run = model.calls.calls_that_run(callee.function, model.calls.known_parameters(call, callee, known))
    backwards = [c for c in model.scopes.scope_nodes(callee.function, cst.Call) if model.calls.backward_roots(c)]
    running = [c for c in run if model.calls.backward_roots(c)]
    return bool(running), len(running) < len(backwards)


def _is_unit_test(model: SemanticModel, func: cst.FunctionDef) -> bool:
    """A ``test*`` function in a test file (or a shared ``_test_*`` body the tests call) checks
    behaviour, it is not evaluation code."""
    filename = model.path.replace("\\", "/").rsplit("/", 1)[-1]
    in_test_file = filename.startswith("test_") or filename.endswith("_test.py") or "/tests/" in model.path
    cls = model.scopes.class_of(func)
    # (functions, and methods of test classes and their mixins: ``ModelE2ETest``, ``CommonTester``,
    # ``_DistTestBase``; not ``Model.test(frames)``, a model wrapper's evaluation method in a file
    # named ``*_test.py``)
    of_tests = cls is None or any("test" in name.lower() for name in (cls.name.value, *model.scopes.class_bases(cls)))
    return in_test_file and of_tests and func.name.value.lstrip("_").startswith("test")


def _components(identifier: str) -> list[str]:
    """``self_val_loader`` -> the identifier and each suffix after an underscore."""
    parts = identifier.split("_")
    return ["_".join(parts[i:]) for i in range(len(parts))]


def _is_loss_call(model: SemanticModel, call: cst.Call) -> bool:
    """A loss function (``F.cross_entropy(out, y)``, ``self.criterion(...)``) or anything spelled
    as one (``self.loss_fn.compute(...)``): it records a graph only from inputs that hold one;
    not a helper of the file handed the model it runs, with no backward of its own
    (``self.loss_fn(operator, x, y)``), nor a module of the file that runs its own model and then
    its loss (CenterNet's ``model_with_loss(batch)``)."""
    if not _spelled_as_loss(model, call):
        return False
    callee = model.calls.callee(call)
    function = callee.function if callee is not None and isinstance(callee.function, cst.FunctionDef) else None
    return not (function is not None and not model.calls.runs_backward(function) and (
        any(model.calls.names_a_model(arg.value) for arg in call.args) or any(
            model.calls.is_forward_pass(inner) and not _spelled_as_loss(model, inner)
            for inner in model.scopes.scope_nodes(function, cst.Call))))


def _spelled_as_loss(model: SemanticModel, call: cst.Call) -> bool:
    text = model.code(call.func).lower()
    if _MODEL_WITH_LOSS.search(text):
        return False  # (``model_with_loss(batch)``: the model, then its loss)
    return "loss" in text or "criterion" in text or model.calls.is_loss_function_call(call)


# A model wrapped together with its loss (CenterNet's ``ModelWithLoss``): it runs the model.
_MODEL_WITH_LOSS = re.compile(r"(?:model|net|network)_?(?:with|and)_?(?:loss|criterion)")


def _evaluation_context(model: SemanticModel, call: cst.Call, helpers: dict, depth: int = 0) \
        -> Optional[Union[Loop, cst.FunctionDef, cst.Module, cst.If]]:
    """The loop, function or module whose code evaluates a model at ``call``, or None (``depth``:
    how many helper calls away from the forward pass ``call`` is; ``helpers``: the answers of
    ``_only_called_to_evaluate`` so far, asked once per function)."""
    scopes = model.scopes
    loops = scopes.loops_around(call)
    for loop in reversed(loops):  # outermost loop over evaluation data
        if isinstance(loop, cst.For) and any(
            _EVAL_ITERABLE.search(word) for name in iterable_identifiers(loop.iter) for word in _components(name)
        ):
            return loop
    func = scopes.function_of(call)
    if func is not None and _is_unit_test(model, func):
        return None
    if func is not None and EVAL_FUNCTION.search(func.name.value) and not _has_backward(model, func) \
            and not model.calls.results_differentiated(func):
        # (``train_and_validate`` trains too: its evaluation is found below, after ``model.eval()``)
        # pytest tests loop over cases (a ``test_`` function no other function of the file calls;
        # ``test_env()`` called by the training loop plays evaluation episodes); a model's own
        # inference method (``_inference_forward``, ``predict_step_logits``) over its layers or time
        # steps, unless it iterates over data.
        in_model = model.scopes.is_model_method(func)
        loops_over_data = not (func.name.value.startswith("test_") and not any(
            model.scopes.function_of(site) is not None for site in model.calls.call_sites(func))) and any(
            model.scopes.is_step_loop(loop) if in_model else
            not isinstance(loop, cst.For) or model.modules.submodule_loop_target(loop) is None for loop in loops)
        # (a model's ``validation_step`` that the file itself, not a framework, calls per batch is
        # the evaluation step of its callers' loop, like a helper's)
        if loops_over_data or _eval_switch_before(model, func, call) or _set_to_eval_by_its_class(model, func, call) \
                or (not in_model or func.name.value in PER_STEP_METHODS) and _called_per_item(model, func) \
                or in_model and (_evaluates_for_the_file(model, func, call) or _evaluates_between_own_steps(model, func)):
            return func
    scope: Scope = func if func is not None else model.module
    switch = _eval_switch_before(model, scope, call)
    if switch is not None and not (func is not None and model.scopes.is_model_method(func) and not _chooses_grad_mode(model, func)):
        # (a model's own method that puts a submodule in eval mode, ``self.target.eval()`` in
        # ``forward``, leaves grad mode to whoever calls it; one that trains the model itself,
        # ``self.train_on_data(data)`` stepping its own optimizer, sets it). The evaluation is the
        # outermost loop after the switch: an epoch loop around both phases also trains.
        after = [loop for loop in loops if not model.tree.contains(loop, switch)]
        if after:
            return after[-1]
        # (a periodic validation inside the training loop, ``if it % every == 0: net.eval();
        # net(val_x)``: the branch is the evaluation, when it differentiates nothing)
        branch = _validation_branch(model, switch, call, loops[-1]) if loops else None
        return branch if branch is not None else loops[0] if loops else scope
    if func is not None:
        key = (func, depth)
        if key not in helpers:
            helpers[key] = False  # (a helper calling itself, or two calling each other)
            helpers[key] = _only_called_to_evaluate(model, func, helpers, depth)
        if helpers[key]:
            return func
    return None


def _evaluates_for_the_file(model: SemanticModel, func: cst.FunctionDef, call: cst.Call) -> bool:
    """A model's own evaluation helper that the training code of the file calls: ``self.eval()``
    before ``call`` and ``self.train()`` after it, so it runs between training steps (an inference
    API for other files' callers, which choose the grad mode, leaves the mode switched), and every
    call of it in the file runs with grad enabled."""
    own = [switch for switch in model.scopes.mode_switches(func)
           if isinstance(switch.func.value, cst.Name) and switch.func.value.value == first_param(func)]
    sites = model.calls.call_sites(func)
    return any(to_eval_mode(s) and model.tree.before(s, call) for s in own) and \
        any(not to_eval_mode(s) and model.tree.before(call, s) for s in own) and \
        bool(sites) and not any(model.grad.is_disabled(site) for site in sites)


def _evaluates_between_own_steps(model: SemanticModel, func: cst.FunctionDef) -> bool:
    """A model class that trains itself (DA-RNN's ``train_model`` stepping the optimizers it
    built) and calls its own evaluation method only from that training, between steps, with grad
    on: the class, not another file's caller, chooses the grad mode its evaluation runs in."""
    cls = model.scopes.self_class(func)
    sites = model.calls.call_sites(func)
    return bool(sites) and all(
        not model.grad.is_disabled(site) and (caller := model.scopes.function_of(site)) is not None
        and caller is not func and model.scopes.self_class(caller) is cls and any(
            model.iterations.runs_step(loop) or model.iterations.trains_through_calls(loop)
            for loop in model.scopes.loops_around(site))
        for site in sites)


def _called_per_item(model: SemanticModel, func: cst.FunctionDef, depth: int = 0) -> bool:
    """An evaluation function of one item (``predictor.infer(image)``) that the file calls only
    in loops (or in helpers called only so), with grad on and no backward: the loop over the
    data is its callers'."""
    sites = model.calls.call_sites(func)
    return bool(sites) and depth < 3 and all(
        not model.grad.is_disabled(site) and (_in_comprehension(model, site) or (
            not _has_backward(model, loops[0]) if (loops := model.scopes.loops_around(site)) else
            (caller := model.scopes.function_of(site)) is not None and caller is not func
            and not _has_backward(model, caller) and _called_per_item(model, caller, depth + 1)))
        for site in sites)


def _in_comprehension(model: SemanticModel, node: cst.CSTNode) -> bool:
    """``[model.validation_step(b) for b in val_loader]``: ``node`` runs once per batch of a
    comprehension over data inside its innermost loop (a comprehension runs no backward)."""
    for above in model.tree.ancestors(node):
        if isinstance(above, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            loops = [above.for_in]
            while loops[-1].inner_for_in is not None:
                loops.append(loops[-1].inner_for_in)
            return any(LOADER_ITERABLE.search(name) or _EVAL_ITERABLE.search(name)
                       for loop in loops for name in iterable_identifiers(loop.iter))
        if isinstance(above, (cst.For, cst.While, cst.FunctionDef, cst.Lambda)):
            return False
    return False


def _only_called_to_evaluate(model: SemanticModel, func: cst.FunctionDef, helpers: dict, depth: int) -> bool:
    """A helper of the file (``loop_body(model, batch)``, ``self._eval_batch(batch)``) that every
    call site runs in evaluation code with grad on and no backward: the caller's evaluation
    reaches the forward passes inside it. A model's own methods are left to their callers' calls."""
    if depth > 2 or model.scopes.is_torch_module_class(model.scopes.self_class(func)):
        return False
    sites = model.calls.call_sites(func)
    return bool(sites) and all(
        model.scopes.function_of(site) is not func and not model.grad.is_disabled(site)
        and (context := _evaluation_context(model, site, helpers, depth + 1)) is not None and not _has_backward(model, context)
        for site in sites)


def _validation_branch(model: SemanticModel, switch: cst.Call, call: cst.Call, loop: Loop) -> Optional[cst.If]:
    """The innermost ``if`` of the training loop ``loop`` that holds both the eval switch and the
    forward pass after it, with no backward or optimizer step of its own."""
    for ancestor in model.tree.ancestors(switch):
        if ancestor is loop:
            return None
        if isinstance(ancestor, cst.If) and model.tree.contains(ancestor.body, call):
            return ancestor if isinstance(ancestor.body, cst.IndentedBlock) and not _has_backward(model, ancestor) else None
    return None


def _eval_switch_before(model: SemanticModel, scope: Scope, call: cst.Call) -> Optional[cst.Call]:
    """``x.eval()`` earlier in the same scope with no ``x.train()`` between it and ``call``; or,
    with no switch of the scope's own before ``call``, the one in a factory of the file whose
    model the scope binds earlier (``model = get_model()``, ``get_model`` ending
    ``model.eval(); return model``)."""
    switch: Optional[cst.Call] = None
    switched = False
    for other in model.scopes.mode_switches(scope):
        if not model.tree.before(other, call):
            break
        func = other.func
        if not _is_builtin_eval(func):
            if func.attr.value == "eval" and _is_own_inference_api(model, scope, func):
                continue
            if _is_other_submodule(model, scope, func, call):
                continue  # ``self.frozen_net.eval()`` says nothing of ``self.proj(x)`` or ``model(x)``
            switch, switched = other if to_eval_mode(other) else None, True
    if not switched:
        switch = next((s for assign, s in model.calls.models_from_eval_factories(scope)
                       if model.tree.before(assign, call)), None)
    return switch


def _set_to_eval_by_its_class(model: SemanticModel, func: cst.FunctionDef, call: cst.Call) -> bool:
    """``self.model(x)`` in a method of a class (not a model) another method of which puts
    ``self.model`` in eval mode (a serving handler's ``initialize``, an evaluator's ``setup``),
    and none back in training mode (a trainer's ``train()`` and ``test()`` share the method)."""
    cls = model.scopes.self_class(func)
    spelled = dotted_name(call.func)
    if cls is None or spelled is None or not spelled.startswith("self.") or model.scopes.is_model_method(func):
        return False
    modes = {to_eval_mode(switch)
             for method in model.tree.descendants(cls, cst.FunctionDef) if method is not func
             for switch in model.scopes.mode_switches(method) if dotted_name(switch.func.value) == spelled}
    return modes == {True}


def _is_own_inference_api(model: SemanticModel, scope: Scope, func: cst.Attribute) -> bool:
    """``self.eval()`` in a method: in a model class (``def encode(self, x): self.eval(); ...``)
    it starts an inference API whose callers, often in other files, choose the grad mode
    (ESPnet's recognizers run under the recognition script's ``no_grad``); in a trainer class it
    calls the trainer's own ``eval`` method. Neither makes the rest of the method evaluation,
    unless the model's method trains the model itself first (steps its own optimizer: ``fit``
    then computes class centroids), so that it, not a caller, chooses the grad mode. The same for
    a model's method switching one of its own submodules that no code of the file calls
    (DomainBed's ``predict``: ``self.network_sma.eval(); return self.network_sma(x)``). A model
    that trains itself and calls the method only between its own steps (``train_model`` calling
    ``self.sample(16)`` every few epochs) chooses the grad mode too."""
    if not isinstance(scope, cst.FunctionDef) or _chooses_grad_mode(model, scope):
        return False
    receiver = dotted_name(func.value) or ""
    return receiver == "self" or receiver.startswith("self.") and model.scopes.is_model_method(scope) and \
        not model.calls.call_sites(scope)


def _chooses_grad_mode(model: SemanticModel, func: cst.FunctionDef) -> bool:
    """A model's own method run by the model's own training, not by callers in other files: it
    trains the model, or the model calls it only between its own steps."""
    return _trains_itself(model, func) or model.scopes.is_model_method(func) and _evaluates_between_own_steps(model, func)


def _trains_itself(model: SemanticModel, func: cst.FunctionDef) -> bool:
    """A model's own method that trains the model (a backward, an optimizer step): it, not a
    caller, chooses the grad mode of what it runs after ``self.eval()``."""
    return model.scopes.is_model_method(func) and _has_backward(model, func)


def _is_other_submodule(model: SemanticModel, scope: Scope, func: cst.Attribute, call: cst.Call) -> bool:
    """``self.<sub>.eval()`` in a method (of a module: a frozen submodule; of a trainer: the
    teacher), also through a local name for it (``tm = self.ema.model; tm.eval()``), and
    ``call`` runs something else than that object."""
    receiver = dotted_name(func.value) or ""
    if not (isinstance(scope, cst.FunctionDef) and model.scopes.self_class(scope) is not None):
        return False
    if isinstance(func.value, cst.Name):
        bindings = model.scopes.reaching_bindings(func.value.value, func)
        if not (bindings and all(b.value is not None and (dotted_name(b.value) or "").startswith("self.")
                                 for b in bindings)):
            return False
    elif not receiver.startswith("self."):
        return False
    same = _same_object(model, scope, receiver)
    return not any(called == spelled or called.startswith(spelled + ".")
                   for called in _objects_run(model, call) for spelled in same)


def _same_object(model: SemanticModel, method: cst.FunctionDef, receiver: str) -> set[str]:
    """``self.network`` and the other attributes ``__init__`` set from the same parameter
    (``self.network = network; self.mnetwork = network``): one object under several names."""
    cls = model.scopes.self_class(method)
    init = model.calls.method_of(cls, "__init__") if cls is not None else None
    if init is None or receiver.count(".") != 1:
        return {receiver}
    stored = model.scopes.stored_parameters(init)
    parameter = stored.get(receiver.split(".", 1)[1])
    return {receiver} | {f"self.{attribute}" for attribute, given in stored.items() if parameter is not None and given == parameter}


def _objects_run(model: SemanticModel, call: cst.Call) -> list[str]:
    """What ``call`` runs, spelled: its callee, and for a helper method of the same class the
    models its body runs (``self.infer(x)`` runs ``self.module_``)."""
    called = [dotted_name(call.func) or ""]
    callee = model.calls.callee(call)
    if callee is not None and isinstance(callee.function, cst.FunctionDef) and \
            (dotted_name(call.func) or "").startswith("self."):
        called += [dotted_name(c.func) or "" for c in model.scopes.scope_nodes(callee.function, cst.Call)
                   if model.calls.is_forward_pass(c)]
    return called


def _is_builtin_eval(func: cst.Attribute) -> bool:
    return isinstance(func.value, cst.Name) and func.value.value in ("builtins", "ast")


def _has_backward(model: SemanticModel, context: cst.CSTNode) -> bool:
    """Evaluation code that differentiates (input gradients, adversarial examples, training
    in eval mode) needs its graph."""
    region = context.body if isinstance(context, (cst.For, cst.While)) else context
    # An optimizer step counts too (``opt.step(closure)``); ``env.step(action)`` does not; nor
    # does marking the inputs for their gradient (``images.requires_grad_(True)``), whoever takes it.
    return any(model.calls.backward_roots(call) or is_step_call(call) or marks_requiring_grad(call)
               or _hands_to_backward(model, call) or _differentiates_what_others_ran(model, call)
               for call in model.tree.descendants(region, cst.Call))


def _hands_to_backward(model: SemanticModel, call: cst.Call) -> bool:
    """``self.backprop(out["loss"])``: a helper of the file differentiates what it is given (not an
    attack helper that runs a forward and a backward of its own on the inputs)."""
    return any(model.flow.value(expr, where).graph for expr, where in model.calls.arguments_differentiated(call))


def _differentiates_what_others_ran(model: SemanticModel, call: cst.Call) -> bool:
    """``model.backward_gradient(sensitivity)``: a method of the file that takes
    ``torch.autograd.grad`` of activations its forward hooks kept differentiates the caller's
    forward, which therefore needs its graph."""
    callee = model.calls.callee(call)
    return callee is not None and isinstance(callee.function, cst.FunctionDef) and \
        model.calls.differentiates_what_others_ran(callee.function)


# What asks autograd for something: with any of these in the wrapped code, ``no_grad`` may
# change what it computes (the other signs, backward and optimizer steps, ``_has_backward``
# already keeps out of the findings).
_AUTOGRAD_ATTRIBUTES = frozenset({"grad", "grad_fn", "requires_grad", "requires_grad_", "retain_grad", "register_hook"})
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward", "torch.enable_grad",
                                 "torch.set_grad_enabled"})


def _uses_autograd(model: SemanticModel, context: cst.CSTNode) -> bool:
    if any(attribute.attr.value in _AUTOGRAD_ATTRIBUTES for attribute in model.tree.descendants(context, cst.Attribute)):
        return True
    return any(model.imports.qualify(call.func) in _AUTOGRAD_FUNCTIONS or model.calls.backward_roots(call)
               for call in model.tree.descendants(context, cst.Call))


def _differentiating_callee(model: SemanticModel, context: cst.CSTNode) -> Optional[str]:
    """The name of a function of the file, called in ``context``, that runs a backward or
    ``torch.autograd.grad`` given the call's arguments (under ``no_grad`` it would fail: nothing
    it differentiates has a graph)."""
    for call in model.tree.descendants(context, cst.Call):
        if _backwards_given(model, call, {})[0]:  # (not a shared runner whose backward the call skips)
            return model.calls.callee(call).function.name.value
    return None


def _no_grad_fix(model: SemanticModel, context: cst.CSTNode) -> tuple[Optional[NodeFix], str]:
    if torch_name_taken(model):
        return None, TORCH_NAME_TAKEN
    differentiating = _differentiating_callee(model, context)
    if differentiating is not None:
        return None, (f"no automatic fix: `{differentiating}`, called in the evaluation code, runs a backward "
                      "that `torch.no_grad()` would break; disable grad around the forward passes only")
    no_grad, needs_import = torch_spelling(model, "torch.no_grad", context)
    no_grad_call = cst.parse_expression(f"{no_grad}()")
    under_no_grad = [cst.WithItem(no_grad_call)]
    if isinstance(context, cst.FunctionDef):
        decorator = cst.Decorator(no_grad_call)
        wrapped: cst.CSTNode = context.with_changes(decorators=[*context.decorators, decorator])
    elif isinstance(context, cst.If):  # the branch's body, under ``no_grad``
        wrapped = context.with_changes(body=context.body.with_changes(body=[cst.With(items=under_no_grad,
                                                                                    body=context.body)]))
    elif isinstance(context, (cst.For, cst.While)):
        wrapped = cst.With(
            items=under_no_grad,
            body=cst.IndentedBlock(body=[context.with_changes(leading_lines=[])]),
            leading_lines=context.leading_lines,
        )
    else:
        return None, "no automatic fix: module-level evaluation code without a loop to wrap in `torch.no_grad()`"
    replacements: Optional[list[Replacement]] = [Replacement(context, wrapped)]
    if needs_import:
        replacements = with_torch_import(model, replacements)
        if replacements is None:
            return None, "no automatic fix: there is no place for the `import torch` it needs"
    return NodeFix("run the evaluation under torch.no_grad()", safe=not _uses_autograd(model, context),
                   replacements=replacements), ""
