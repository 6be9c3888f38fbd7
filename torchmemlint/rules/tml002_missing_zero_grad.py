"""TML002 missing-zero-grad.

## What it does
Flags a loop that calls `.backward()` (also `scaler.scale(loss).backward()`,
`accelerator.backward(loss)`, Lightning's `self.manual_backward(loss)`) and steps an optimizer
(`optimizer.step()`, `scaler.step(optimizer)`) with no gradient reset for that optimizer anywhere
in the loop (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`, `p.grad.zero_()`),
reported at the step of the first optimizer left unreset.
With two optimizers (a GAN), a reset of one model does not cover the other's optimizer. A step
function called once per iteration (a function or method with the backward and the step, whose
callers in the file do not reset, or a manually optimized Lightning `training_step`) counts as
the loop's body. A loop whose only resets sit in one branch of an `if` is flagged for the step
in the other branch (`if amp: opt.zero_grad(); scaler.step(opt)` / `else: loss.backward();
opt.step()`), with the fix inserted in that branch.

## Why is this bad?
Gradients accumulate *in place* into `.grad`: each step applies the sum of all previous
gradients, so training silently goes wrong. Contrary to a popular myth this does **not** make
memory grow — the `.grad` buffers are allocated once. With `set_to_none=True` (the default of
`zero_grad()` since PyTorch 2.0) the buffers are freed between steps, so a reset also lowers the
peak of the next forward pass.

## Example
```python
optimizer.zero_grad()
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad(set_to_none=True)
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
```
Gradient accumulation that resets every few steps
(`if (i + 1) % accum == 0: optimizer.step(); optimizer.zero_grad()`) stays silent.

## Fix safety
The fix inserts `optimizer.zero_grad(set_to_none=True)` before the first backward that feeds the
optimizer's step (with two optimizers, after the other one's step), or right after the step
when only the step is conditional (gradient accumulation keeps summing between steps). That
changes the updates the program computes, so the fix is **unsafe** (`--unsafe-fixes`). An
optimizer wrapper of the file that defines `step()` but no `zero_grad()` gets no fix (the call
would raise); a wrapper whose `step()` sets the model's gradients to None is a reset itself.

## Runtime signature
No memory growth: `verify` reports `not-reproduced` for growth. The cost is wrong gradients and,
without `set_to_none`, `.grad` buffers held through the next forward (a higher peak).
"""
from __future__ import annotations

from typing import Iterator, Optional, Sequence, Union

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import split_leading_lines
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.params import RESET_METHODS, could_be_optimizer_base
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.scopes import Loop
from torchmemlint.semantics.vocabulary import stepped_optimizer

Region = Union[Loop, "cst.FunctionDef"]
BRANCH_MESSAGE = ("this branch calls backward() and optimizer.step() without resetting gradients (only the other "
                  "branch resets them); they accumulate across steps taken on this path")
# ``dist_autograd.backward(context_id, ...)`` keeps gradients in the context, not in ``.grad``.
_CONTEXT_BACKWARDS = frozenset({"torch.distributed.autograd.backward"})


class MissingZeroGrad(Rule):
    code = "TML002"
    name = "missing-zero-grad"
    message = "loop calls backward() and optimizer.step() but never resets gradients; they accumulate across steps"
    triggers = ("backward",)

    def could_match(self, facts: FileFacts) -> bool:
        # A region with both a backward call and an optimizer step.
        return super().could_match(facts) and "step" in facts.method_calls and (
            "backward" in facts.method_calls or "manual_backward" in facts.method_calls
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        regions: list[Region] = [*model.tree.nodes(cst.For), *model.tree.nodes(cst.While), *model.tree.nodes(cst.FunctionDef)]
        for region in regions:
            calls = _region_calls(model, region)
            backwards = [c for c in calls if _is_backward_call(model, c) or _backward_in_helper(model, c)]
            steps = [(c, o) for c in calls for o in [_stepped_optimizer(c)] if o is not None]
            if not backwards or not steps:
                continue
            if isinstance(region, cst.FunctionDef):
                if model.scopes.loops_around(backwards[0]) or not _step_function_left_unreset(model, region):
                    continue  # a loop of the function is the region, or its callers reset
            elif _inner_loop_reports(model, region):
                continue
            unreset = _unreset_optimizers(model, region, calls, steps)
            if not unreset:
                branch_step = _step_in_branch_without_reset(model, region, calls, backwards, steps)
                if branch_step is not None:
                    fix, no_fix = _insert_zero_grad(model, [branch_step], backwards, steps)
                    yield Finding(branch_step[0], message=BRANCH_MESSAGE, fix=fix, no_fix=no_fix)
                continue
            first_step = next(call for call, optimizer in steps if optimizer in unreset)
            # (at the step that uses the stale gradients, where a reader of the loop looks for it)
            fix, no_fix = _insert_zero_grad(model, [(c, o) for c, o in steps if o in unreset], backwards, steps)
            yield Finding(first_step, fix=fix, no_fix=no_fix)


def _region_calls(model: SemanticModel, region: Region) -> Sequence[cst.Call]:
    if isinstance(region, cst.FunctionDef):
        return model.scopes.scope_nodes(region, cst.Call)
    return model.scopes.loop_body_nodes(region, cst.Call)


def _is_backward_call(model: SemanticModel, call: cst.Call) -> bool:
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("backward", "manual_backward")):
        return False
    return bool(model.calls.backward_roots(call)) and model.imports.qualify(call.func) not in _CONTEXT_BACKWARDS


def _backward_in_helper(model: SemanticModel, call: cst.Call) -> bool:
    """``loss = compute_loss(model, batch)`` whose body runs the backward, the loop stepping the
    optimizer: the helper's backward is the loop's."""
    callee = model.calls.callee(call)
    return callee is not None and callee.constructs is None and isinstance(callee.function, cst.FunctionDef) \
        and model.calls.runs_backward(callee.function) and not any(
            _stepped_optimizer(c) for c in model.scopes.scope_nodes(callee.function, cst.Call))


def _stepped_optimizer(call: cst.Call) -> Optional[str]:
    """The optimizer a call steps, spelled (``opt.step()``, ``scaler.step(opt)``), or None."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "step"):
        return None
    return stepped_optimizer(dotted_name(func.value) or "", dotted_name(call.args[0].value) if call.args else None)


def _over_fresh_leaves(model: SemanticModel, region: Region, optimizer: str) -> bool:
    """``opt = torch.optim.SGD([x_in])`` built in the loop over a leaf the loop also makes anew
    (``x_in = latents.detach().clone().requires_grad_()``): each optimizer steps one backward's
    gradients, on a tensor no later iteration uses."""
    if isinstance(region, cst.FunctionDef):
        return False
    bindings = [b for b in model.scopes.bindings(model.scopes.scope_of(region)).get(optimizer, [])]
    if not bindings or not all(model.tree.contains(region.body, b.node) for b in bindings):
        return False
    for binding in bindings:
        value = binding.value
        if not (isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, (cst.List, cst.Tuple))):
            return False
        for element in value.args[0].value.elements:
            leaf = element.value
            if not isinstance(leaf, cst.Name) or not any(
                    model.tree.contains(region.body, b.node) for b in model.scopes.reaching_bindings(leaf.value, value)):
                return False
    return True


def _unreset_optimizers(model: SemanticModel, region: Region, calls: list[cst.Call],
                        steps: list[tuple[cst.Call, str]]) -> list[str]:
    """The stepped optimizers whose gradients nothing in the region resets. A reset that
    cannot be attributed (``p.grad = None``, a helper, an unknown receiver) covers them all."""
    optimizers = [o for o in dict.fromkeys(o for _, o in steps) if not _over_fresh_leaves(model, region, o)]
    if not optimizers:
        return []
    receivers: list[str] = []
    for call in calls:
        if not _resets(model, call):
            continue
        func = call.func
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) and func.attr.value in RESET_METHODS \
            else None  # (``p.grad.zero_()``, a helper that resets: not attributable)
        if receiver is None:
            return []
        receivers.append(receiver)
    if model.params.clears_grad_attribute(region):
        return []
    if not receivers:
        return optimizers
    trained_by = {o: _models_of(model, o, steps) for o in optimizers}
    unreset = []
    for optimizer in optimizers:
        if optimizer in receivers:
            continue
        other_optimizers = set(optimizers) - {optimizer}
        own = trained_by[optimizer]
        reset_models = set().union(*(trained_by.get(r) or set() for r in receivers))
        if own is not None and own <= reset_models:
            continue  # InfoGAN's ``Adam(chain(G.parameters(), D.parameters()))``: G's and D's resets cover it
        if all(r in other_optimizers for r in receivers):  # only the other optimizers are reset
            unreset.append(optimizer)
            continue
        if own is None or own & set(receivers):
            continue  # built outside this file, or one of its models is reset
        others = set().union(*(m | {o} for o, m in trained_by.items() if o != optimizer and m is not None))
        if all(r in others for r in receivers):  # every reset belongs to another optimizer
            unreset.append(optimizer)
    return unreset


def _step_in_branch_without_reset(model: SemanticModel, region: Region, calls: Sequence[cst.Call],
                                  backwards: list[cst.Call], steps: list[tuple[cst.Call, str]]) \
        -> Optional[tuple[cst.Call, str]]:
    """An optimizer step, with a backward before it, in one branch of an ``if`` whose other branch
    holds every gradient reset of the region (``if amp: zero_grad(); scaler.step(opt) else:
    loss.backward(); opt.step()``): that branch never resets."""
    resets = [c for c in calls if _resets(model, c)]
    if not resets or model.params.clears_grad_attribute(region):
        return None
    tree = model.tree
    for ancestor in tree.ancestors(resets[0]):
        if ancestor is region:
            return None
        branch = ancestor
        choice = tree.parent.get(branch)
        if not (isinstance(choice, cst.If) and branch in (choice.body, choice.orelse)):
            continue
        if not all(tree.contains(branch, reset) for reset in resets):
            continue
        other = choice.orelse if branch is choice.body else choice.body
        for step, optimizer in steps:
            if other is not None and tree.contains(other, step) and \
                    any(tree.contains(other, b) and tree.before(b, step) for b in backwards):
                return step, optimizer
    return None


def _resets(model: SemanticModel, call: cst.Call) -> bool:
    """A gradient reset: ``x.zero_grad()`` and the like, ``p.grad.zero_()``, a helper that resets."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name is not None and (name in RESET_METHODS or model.params.resets_gradients(call))


def _models_of(model: SemanticModel, optimizer: str, steps: list[tuple[cst.Call, str]]) -> Optional[set[str]]:
    """The models whose ``.parameters()`` build ``optimizer`` (``Adam(netG.parameters())`` ->
    {"netG"}), or None when its construction is not in this file."""
    at = steps[0][0]
    constructions: list[cst.BaseExpression] = []
    if "." not in optimizer:
        bindings = model.scopes.reaching_bindings(optimizer, at)
        constructions = [b.value for b in bindings if b.value is not None]
        func = model.scopes.function_of(at)
        if func is not None and any(isinstance(b.node, cst.Param) for b in bindings):
            # an optimizer handed in (``loop_body(..., d_optimizer, ...)``): built where the callers
            # build what they pass
            for site in model.calls.call_sites(func):
                for given, _ in model.calls.arguments(site, model.calls.callee(site)).get(optimizer, ()):
                    if isinstance(given, cst.Name):
                        constructions += [b.value for b in model.scopes.reaching_bindings(given.value, site)
                                          if b.value is not None]
    else:
        constructions = [a.value for a in model.tree.nodes(cst.Assign)
                         if any(dotted_name(t.target) == optimizer for t in a.targets)]
    models = set()
    for construction in constructions:
        for call in model.tree.descendants(construction, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("parameters", "named_parameters"):
                spelled = dotted_name(func.value)
                if spelled is not None:
                    models.add(spelled)
    return models or None


def _step_function_left_unreset(model: SemanticModel, func: cst.FunctionDef) -> bool:
    """A function that runs one whole step (backward and optimizer step, no loop) is the loop
    body of its callers: unreset when it is a manually optimized Lightning ``training_step``
    (Lightning zeroes nothing then), or when it is called from loops of this file and none of
    them resets gradients around the call."""
    cls = model.scopes.class_of(func)
    if model.scopes.is_lightning_module(cls) and model.scopes.is_per_step_method(func):
        return True
    # The resolved calls (``state.step(x, y)`` on an object of the class), else the calls spelled
    # like it outside it (its own ``self.optimizer.step()`` is no call of it).
    sites = model.calls.call_sites(func) or [
        site for site in model.calls.calls_spelled(func.name.value, method=cls is not None)
        if not model.tree.contains(func, site)]
    if not sites:
        return False
    for site in sites:
        loops = model.scopes.loops_around(site)
        if not loops:
            return False  # called once from somewhere we do not follow: unknown
        # (the call of ``func`` itself is no reset around it: what ``func`` resets, and for
        # which optimizer, is asked of its own body)
        calls = [c for c in model.scopes.loop_body_nodes(loops[0], cst.Call) if c is not site]
        if any(model.params.resets_gradients(c) for c in calls) or model.params.clears_grad_attribute(loops[0]):
            return False
    return True


def _inner_loop_reports(model: SemanticModel, loop: Loop) -> bool:
    """Report the innermost loop that has both calls, not every loop around it."""
    for inner in [*model.tree.descendants(loop.body, cst.For), *model.tree.descendants(loop.body, cst.While)]:
        calls = model.scopes.loop_body_nodes(inner, cst.Call)
        if any(_is_backward_call(model, c) for c in calls) and any(_stepped_optimizer(c) is not None for c in calls):
            return True
    return False


def _backward_for(model: SemanticModel, step: cst.Call, backwards: list[cst.Call],
                  steps: list[tuple[cst.Call, str]]) -> cst.Call:
    """The first backward that feeds ``step``: after the previous optimizer step, before this one."""
    tree = model.tree
    previous = [c for c, _ in steps if tree.before(c, step)]
    after = previous[-1] if previous else None
    for backward in backwards:
        if tree.before(backward, step) and (after is None or tree.before(after, backward)):
            return backward
    return backwards[0]


def _insert_zero_grad(model: SemanticModel, unreset: list[tuple[cst.Call, str]], backwards: list[cst.Call],
                      steps: list[tuple[cst.Call, str]]) -> tuple[Optional[NodeFix], str]:
    """``optimizer.zero_grad(set_to_none=True)`` for each unreset optimizer: before the first
    backward that feeds its step (so gradients another phase left in its parameters, e.g. a
    generator loss reaching the discriminator, are dropped too), or right after its step when
    the step is conditional and the backward is not (gradient accumulation must keep summing)."""
    before: dict[cst.SimpleStatementLine, list[str]] = {}
    after: dict[cst.SimpleStatementLine, list[str]] = {}
    for step, optimizer in unreset:
        if not _has_zero_grad(model, step):
            return None, NO_ZERO_GRAD_FIX
        backward = _backward_for(model, step, backwards, steps)
        conditional = _conditional_apart(model, step, backward)
        anchor = model.tree.statement_of(step if conditional else backward)
        if not isinstance(anchor, cst.SimpleStatementLine) or \
                not isinstance(model.tree.parent.get(anchor), (cst.IndentedBlock, cst.Module)):
            return None, ""
        resets = (after if conditional else before).setdefault(anchor, [])
        if optimizer not in resets:
            resets.append(optimizer)
    replacements = []
    for anchor in dict.fromkeys([*before, *after]):
        first = [_reset_statement(o) for o in before.get(anchor, [])]
        last = [_reset_statement(o) for o in after.get(anchor, [])]
        kept = anchor
        if first:
            # Blank lines above the anchor go above the inserted reset; the comment lines right
            # above it describe it (``# backprop``) and stay with it.
            separation, attached = split_leading_lines(anchor.leading_lines)
            first[0] = first[0].with_changes(leading_lines=separation)
            kept = anchor.with_changes(leading_lines=attached)
        replacements.append(Replacement(anchor, cst.FlattenSentinel([*first, kept, *last])))
    return NodeFix("reset the optimizer's gradients every step", safe=False, replacements=replacements), ""


NO_ZERO_GRAD_FIX = ("no automatic fix: the stepped object defines no `zero_grad()`; reset the model's gradients "
                    "(`model.zero_grad(set_to_none=True)`) every step")


def _has_zero_grad(model: SemanticModel, step: cst.Call) -> bool:
    """The stepped object has a ``zero_grad`` to call: not an optimizer wrapper of the file's
    that defines only ``step`` (inserting ``wrapper.zero_grad()`` would raise)."""
    callee = model.calls.callee(step)
    cls = model.scopes.class_of(callee.function) if callee is not None and \
        isinstance(callee.function, cst.FunctionDef) else None
    return cls is None or model.calls.method_of(cls, "zero_grad") is not None or \
        any(could_be_optimizer_base(base) for base in model.scopes.class_bases(cls))


def _reset_statement(optimizer: str) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Expr(cst.parse_expression(f"{optimizer}.zero_grad(set_to_none=True)"))])


def _conditional_apart(model: SemanticModel, step: cst.Call, backward: cst.Call) -> bool:
    """The step runs under an ``if`` (or inner loop) that the backward is not in."""
    for ancestor in model.tree.ancestors(step):
        if model.tree.contains(ancestor, backward):
            return False
        if isinstance(ancestor, (cst.If, cst.Else, cst.For, cst.While, cst.Try)):
            return True
    return False
