"""TML007 hook-registered-in-loop.

## What it does
Flags `register_forward_hook`, `register_forward_pre_hook`, `register_full_backward_hook`,
`register_full_backward_pre_hook`, `register_backward_hook`, a parameter's `register_hook` (and
the global `torch.nn.modules.module.register_module_*` hooks) called on every iteration of a step
loop, in a per-step method (`forward`, `training_step`, ...), or in a method that the file calls
again and again on one object (`cam.generate(image)` for each image), on a persistent module or
parameter — `self.x`, a model bound before the loop, the modules or parameters of one,
`for block in self.blocks`, a layer a helper of the file looks up from one
(`resolve_layer(model, "blocks.3")`, with constant other arguments) — whose handle is never
`.remove()`d. The registration may sit in a
helper, a method or an `__init__` that the loop calls: `attach(model)` per batch,
`explainer.saliency(image)` whose helper registers, `GradCAM(model, layer)` built per image (the
object is new, the model it hooks is not). Each is reported at the registration, where the fix
goes, with the loop's call or construction as related location.

## Why is this bad?
Each call adds one more hook; none replaces the previous one. After n iterations every forward
(or backward) runs n hooks, and each hook's closure keeps alive whatever it captured — often the
activations or gradients it was written to collect. Host and device memory grow and steps get
slower every iteration.

Silent when the handle is removed in the same iteration (`handle.remove()`, also through a
helper, a list of handles, or `with module.register_forward_hook(f):`; a manager's `clear()` that
the trainer calls only after the last epoch removes nothing while the hooks pile up), when registration is
guarded to happen once (`if handle is None:`; a test of the configuration, `if self.layers ==
"all":`, picks layers and guards nothing), on a tensor created in the iteration
(`out.register_hook(f)` dies with `out`), and for one-time setup loops over
`model.named_modules()`.

## Example
```python
for images, _ in loader:
    model.layer4.register_forward_hook(lambda m, i, o: features.append(o))
    model(images)
```

## Use instead
```python
handle = model.layer4.register_forward_hook(lambda m, i, o: features.append(o))
for images, _ in loader:
    model(images)
handle.remove()
```

## Fix safety
For a registration that is a statement of its own directly in the body of the loop (`recv.register_forward_hook(f)`
or `handle = recv.register_forward_hook(f)`), with no `return` in the loop:
- when the call reads nothing the loop binds (the hook function, its default arguments, the
  module are the same on every iteration), the fix registers once before the loop, keeps the
  handle and calls `handle.remove()` after the loop;
- otherwise (`lambda ..., kept=activations: ...` with `activations` made per iteration), it keeps
  the registration in place with its handle and calls `handle.remove()` at the end of the
  iteration, when no `continue` or `break` can skip that.

Both are **unsafe**: the first runs the hook once instead of once per registration made so far
(which is the point, but a hook that counts calls sees fewer), and code after the loop no longer
has the hook; the second also drops the hook before later iterations' code outside the loop
body. A registration in a per-step method (`forward`, `training_step`), inside a nested loop or
condition, or inside a larger expression (`handles.append(m.register_forward_hook(f))`) gets no
fix: where the hook should live is the author's call.

## Runtime signature
Live memory (host, and device when the closures hold tensors) grows every iteration, and step
time grows with the number of hooks (`confirmed-growth`).
"""
from __future__ import annotations

from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import split_leading_lines
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.hooks import HookRegistration, Pile
from torchmemlint.semantics.prescreen import HOOK, FileFacts


class HookRegisteredInLoop(Rule):
    code = "TML007"
    name = "hook-registered-in-loop"
    message = "hook registered on a persistent module every iteration and never removed: hooks and their closures pile up"
    triggers = ("register_",)

    keeping = frozenset({HOOK})

    def could_match(self, facts: FileFacts) -> bool:
        # A registration that may run again and again (``Hooks.piles_up``).
        return super().could_match(facts) and facts.hooks_may_pile_up()

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for registration in model.hooks.registrations:
            pile = model.hooks.piles_up(registration)
            if pile is None:
                continue
            target = model.code(registration.receiver) if registration.receiver is not None else "every module"
            if pile.constructs is not None:  # reported where the hook is registered, as for a helper's
                yield Finding(registration.call, related=[(pile.at, f"`{pile.constructs}(...)` built here on every iteration")],
                              iteration=pile.iteration,
                              message=f"`{registration.method}` on `{target}` runs each time `{pile.constructs}(...)` is "
                                      f"built, once per iteration, and is never removed: hooks and what their closures "
                                      f"capture pile up; build it once before the loop, or remove its hooks",
                              no_fix="no automatic fix: the hook is registered by a constructor the loop calls; where "
                                     "it should live is the author's call")
                continue
            related = [] if pile.at is registration.call else [(pile.at, "called here on every iteration")]
            fix, no_fix = _register_once_fix(model, registration, pile)
            yield Finding(registration.call, related=related, fix=fix, no_fix=no_fix, iteration=pile.iteration,
                          message=f"`{registration.method}` on `{target}` runs every iteration and the handle is never "
                                  f"removed: hooks and what their closures capture pile up; register once before the "
                                  f"loop, or keep the handle and call `.remove()`")


def _register_once_fix(model: SemanticModel, registration: HookRegistration, pile: Pile) -> tuple[Optional[NodeFix], str]:
    """Register once before the loop and remove after it, or, when the registration reads what
    the loop binds, remove the hook at the end of each iteration (see "Fix safety")."""
    loop = pile.iteration
    if pile.at is not registration.call:
        return None, "no automatic fix: the hook is registered by a function the loop calls; where it should live is the author's call"
    if not isinstance(loop, (cst.For, cst.While)):
        return None, "no automatic fix: the hook is registered on every call of a method; where it should live is the author's call"
    statement = model.tree.parent.get(model.tree.parent.get(registration.call))
    small = model.tree.parent.get(registration.call)
    handle_name = _handle_name(model, small, registration.call)
    body = list(loop.body.body)
    # By identity: CST nodes compare by value, and a loop may repeat the same line.
    index = next((i for i, line in enumerate(body) if line is statement), None)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1 or handle_name is None \
            or index is None:
        return None, "no automatic fix: the registration is not a statement of its own directly in the loop body"
    if _any_inside(model, loop.body, (cst.Return, cst.Yield)):
        return None, "no automatic fix: the loop can return from inside; a `remove()` after it could be skipped"
    register = cst.parse_statement(f"{handle_name} = {model.code(registration.call)}\n")
    remove = cst.parse_statement(f"{handle_name}.remove()\n")
    if not _reads_loop_bindings(model, registration.call, loop):
        if len(body) == 1:
            return None, "no automatic fix: the loop does nothing else"
        del body[index]
        if index < len(body):  # comment lines above the registration stay in the loop, above what follows it
            body[index] = body[index].with_changes(leading_lines=[*statement.leading_lines, *body[index].leading_lines])
        before, attached = split_leading_lines(loop.leading_lines)
        moved = loop.with_changes(body=loop.body.with_changes(body=body), leading_lines=attached)
        register = register.with_changes(leading_lines=before, trailing_whitespace=statement.trailing_whitespace)
        new = cst.FlattenSentinel([register, moved, remove])
        return NodeFix("register the hook once before the loop and remove it after", safe=False,
                       replacements=[Replacement(loop, new)]), ""
    if _any_inside(model, loop.body, (cst.Continue, cst.Break)):
        return None, ("no automatic fix: the registration reads what the loop binds, and a `continue`/`break` "
                      "could skip a `remove()` at the end of the iteration")
    body[index] = register.with_changes(leading_lines=statement.leading_lines,
                                                        trailing_whitespace=statement.trailing_whitespace)
    body.append(remove)
    return NodeFix("remove the hook at the end of each iteration", safe=False,
                   replacements=[Replacement(loop.body, loop.body.with_changes(body=body))]), ""


def _handle_name(model: SemanticModel, small: cst.CSTNode, call: cst.Call) -> Optional[str]:
    """The name the handle is (or will be) kept in: the name a plain ``h = ...register...(...)``
    binds, else ``hook_handle`` (numbered if the file uses that name); None inside a larger
    expression."""
    if isinstance(small, cst.Assign):
        if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small.targets[0].target.value
        return None
    if not isinstance(small, cst.Expr):
        return None
    used = {name.value for name in model.tree.nodes(cst.Name)}
    candidates = ("hook_handle", *(f"hook_handle_{n}" for n in range(2, 100)))
    return next(name for name in candidates if name not in used)


def _reads_loop_bindings(model: SemanticModel, call: cst.Call, loop: Union[cst.For, cst.While]) -> bool:
    """Whether evaluating ``call`` reads a name the loop binds (its target, an assignment or def
    in its body). Lambda bodies are not evaluated at registration: a closure looks its names up
    when the hook runs, as the original's closures do."""
    tree = model.tree
    bound = {name.value for name in tree.descendants(loop.target, cst.Name)} if isinstance(loop, cst.For) else set()
    targets = [*tree.descendants(loop.body, cst.AssignTarget), *tree.descendants(loop.body, cst.AugAssign),
               *tree.descendants(loop.body, cst.AnnAssign), *tree.descendants(loop.body, cst.For),
               *tree.descendants(loop.body, cst.CompFor), *tree.descendants(loop.body, cst.AsName),
               *tree.descendants(loop.body, cst.NamedExpr)]
    for node in targets:
        target = node.name if isinstance(node, cst.AsName) else node.target
        bound.update(n.value for n in tree.descendants(target, cst.Name))
    bound.update(node.name.value for kind in (cst.FunctionDef, cst.ClassDef) for node in tree.descendants(loop.body, kind))
    lambda_bodies = [lam.body for lam in model.tree.descendants(call, cst.Lambda)]
    for name in model.tree.descendants(call, cst.Name):
        parent = model.tree.parent.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name or isinstance(parent, cst.Arg) and parent.keyword is name:
            continue
        if isinstance(parent, cst.Param) and parent.name is name:
            continue
        if any(model.tree.contains(body, name) for body in lambda_bodies):
            continue
        if name.value in bound:
            return True
    return False


def _any_inside(model: SemanticModel, block: cst.CSTNode, kinds: tuple) -> bool:
    """A node of ``kinds`` in ``block`` that belongs to it: not in a nested function, nor (for
    ``continue``/``break``) in a nested loop."""
    for node in (found for kind in kinds for found in model.tree.descendants(block, kind)):
        if model.scopes.function_of(node) is not model.scopes.function_of(block):
            continue
        if isinstance(node, (cst.Continue, cst.Break)) and any(
                model.tree.contains(block, loop) for loop in model.scopes.loops_around(node)):
            continue
        return True
    return False
