"""Which loops run training or evaluation steps, at which granularity.

A *step-running* loop calls a backward pass or an optimizer step somewhere in its body: state
carried across its iterations crosses a backward. A *batch* loop does one step's work itself
(a forward, a backward or an optimizer step outside any nested loop, or it iterates a loader);
an epoch loop around it, or a loop over models, is no batch loop."""
from __future__ import annotations

from typing import Callable, Optional, Union

import libcst as cst

from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Loop, Scopes, is_step_call, keyword_value, terminal_name
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import LOADER_ITERABLE, MAIN_PROCESS_CHECK, is_model_name

Iteration = Union[Loop, "cst.FunctionDef", "cst.Lambda"]  # a string: see scopes.Loop


class Iterations:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls
        self._per_step: dict[cst.FunctionDef, bool] = {}
        self._steps_within: dict[tuple[cst.FunctionDef, int], bool] = {}
        self._training_loops: dict[Loop, bool] = {}
        self._forwarding_loops: dict[Loop, bool] = {}
        self._step_calls: dict[Iteration, list[cst.Call]] = {}

    def step_iteration(self, node: cst.CSTNode) -> Optional[Iteration]:
        """The innermost *step* loop around ``node`` in its function, else its function when that
        runs once per step (``runs_per_step``): the iteration whose repetitions make a kept value
        pile up. A loop over layers, heads or the steps of one episode inside it is skipped
        (``while not done:`` in ``for episode``), so a container bound before the step loop is
        still seen to grow."""
        for loop in self.scopes.loops_around(node):
            if self.scopes.is_step_loop(loop) or self.trains_through_calls(loop):
                return loop
        hook = self._forward_hook_lambda(node)
        if hook is not None:
            return hook
        func = self.scopes.function_of(node)
        if func is not None and self.runs_per_step(func):
            return func
        return None

    def trains_through_calls(self, loop: Loop) -> bool:
        """Each iteration trains: it calls a function of the file that runs a backward pass or an
        optimizer step, itself or through its own helpers (``trainer.train(loader)`` per
        hyper-parameter setting; ``agent.update(batch)`` whose ``_q_update`` steps)."""
        known = self._training_loops.get(loop)
        if known is None:
            known = self._training_loops[loop] = any(
                (callee := self.calls.callee(call)) is not None and isinstance(callee.function, cst.FunctionDef)
                and callee.constructs is None and (
                    bool(self.step_calls(callee.function)) or self._trains_through_a_helper(callee.function))
                for call in self.scopes.loop_body_nodes(loop, cst.Call))
        return known

    def _trains_through_a_helper(self, func: cst.FunctionDef) -> bool:
        """A function of the file that ``func`` calls steps an optimizer or runs a backward pass
        into ``.grad`` (``compute_step(cam, image)`` calling a saliency object whose ``__call__``
        does ``score.backward()``); not a second-order ``autograd.grad`` inside a helper: that is
        part of computing one step's loss."""
        return any(
            (callee := self.calls.callee(call)) is not None and isinstance(callee.function, cst.FunctionDef)
            and callee.constructs is None and callee.function is not func and any(
                is_step_call(step) or self.imports.qualify(step.func) != "torch.autograd.grad"
                for step in self.step_calls(callee.function))
            for call in self.scopes.scope_nodes(func, cst.Call))

    def forwards_through_calls(self, loop: Loop) -> bool:
        """Each iteration runs a model through a function of the file that calls it itself
        (``prob = net.predict(image)`` per image, ``predict`` running ``self(x)``)."""
        known = self._forwarding_loops.get(loop)
        if known is None:
            known = self._forwarding_loops[loop] = any(
                (callee := self.calls.callee(call)) is not None and isinstance(callee.function, cst.FunctionDef)
                and callee.constructs is None
                and any(self.runs_forward(inner) for inner in self.scopes.scope_nodes(callee.function, cst.Call))
                for call in self.scopes.loop_body_nodes(loop, cst.Call))
        return known

    def _forward_hook_lambda(self, node: cst.CSTNode) -> Optional[cst.Lambda]:
        """The lambda around ``node`` (in its function) registered as a forward hook."""
        for ancestor in self.tree.ancestors(node):
            if isinstance(ancestor, cst.Lambda) and ancestor in self.calls.forward_hooks:
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return None
        return None

    def runs_per_step(self, func: cst.FunctionDef) -> bool:
        """A method the framework calls once per step (``training_step``, a module's ``forward``
        ...), or a function this file calls from a step loop or from another function that runs
        once per step, or a step of its own (a backward, an optimizer step) called in any loop, or
        the closure an optimizer's ``step`` calls, or a hyper-parameter search's objective (``trainer.train_batch(batch)`` in ``for batch in loader``), or a forward
        hook (run on every forward pass of its module)."""
        known = self._per_step.get(func)
        if known is not None:
            return known
        self._per_step[func] = False  # recursion guard
        is_step = self._steps(func, 0)  # it runs a backward or an optimizer step, itself or in a helper
        result = self.scopes.is_per_step_method(func) or func in self.calls.forward_hooks or \
            func in self.calls.step_closures or func in self.calls.trial_objectives or \
            self._one_optimizer_step_per_call(func) or any(
            any(is_step or self.scopes.is_step_loop(loop) for loop in self.scopes.loops_around(site))
            or ((caller := self.scopes.function_of(site)) is not None and caller is not func and self.runs_per_step(caller))
            for site in self.calls.call_sites(func)
        )
        self._per_step[func] = result
        return result

    def _one_optimizer_step_per_call(self, func: cst.FunctionDef) -> bool:
        """``func`` steps an optimizer outside any loop of its own (sockeye's ``_step(batch)``:
        forward, backward, ``optimizer.step()``): each call is one training step, whoever makes it
        (the trainer calling it may be in another file)."""
        steps = [c for c in self._optimizer_steps(func) if self.scopes.function_of(c) is func]
        return bool(steps) and not any(self.scopes.loops_around(c) for c in steps)

    def _steps(self, func: cst.FunctionDef, depth: int) -> bool:
        """``func`` runs a backward or an optimizer step itself, or through a function of the
        file it calls (``partial_fit`` calling ``update_weights``), two calls deep at most."""
        key = (func, depth)  # (by depth too: an answer cut short at depth 2 is not the one at depth 0)
        known = self._steps_within.get(key)
        if known is None:
            self._steps_within[key] = False  # recursion guard
            known = bool(self.step_calls(func)) or depth < 2 and any(
                isinstance(callee.function, cst.FunctionDef) and callee.function is not func
                and self._steps(callee.function, depth + 1)
                for call in self.scopes.scope_nodes(func, cst.Call)
                if (callee := self.calls.callee(call)) is not None and callee.constructs is None)
            self._steps_within[key] = known
        return known

    def fed_back(self, function: cst.FunctionDef, name: str,
                 counts: Callable[[cst.Call], bool] = lambda site: True) -> bool:
        """A parameter that ``function`` returns (alone or in a tuple) and that a caller's step
        loop passes back in: ``ema = loop_body(x, ema)`` carries it from one call to the next
        (through the call sites ``counts`` keeps)."""
        return bool(self.feedbacks(function, name, counts))

    def feedbacks(self, function: cst.FunctionDef, name: str,
                  counts: Callable[[cst.Call], bool] = lambda site: True) -> list[tuple[cst.Call, cst.Name]]:
        """The call sites that feed parameter ``name`` back (``fed_back``), each with the
        caller's name that carries it (``ema`` of ``ema = loop_body(x, ema)``)."""
        params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        if name not in params:
            return []
        position = None
        for ret in self.scopes.scope_nodes(function, cst.Return):
            values = [e.value for e in ret.value.elements] if isinstance(ret.value, cst.Tuple) else [ret.value]
            spelled = [v.value if isinstance(v, cst.Name) else None for v in values]
            if name in spelled:
                position = (spelled.index(name), len(values)) if len(values) > 1 else (None, 1)
        if position is None:
            return []
        index, width = position
        found = []
        for site in self.calls.call_sites(function):
            if not counts(site):
                continue
            callee = self.calls.callee(site)
            given = self.calls.arguments(site, callee).get(name, ()) if callee is not None else ()
            passed = dotted_name(given[0][0]) if given else None  # (``self.totals`` too)
            target = self.calls.result_target(site, index, width)
            if passed is None or target is None:
                continue
            loop = self.step_iteration(site)
            if dotted_name(target) == passed and isinstance(loop, (cst.For, cst.While)) and \
                    self._only_binding_in(loop, passed, self.tree.parent[site]):
                found.append((site, target))
        return found

    def _only_binding_in(self, loop: cst.CSTNode, name: str, assign: cst.Assign) -> bool:
        """``assign`` is the only binding of ``name`` in the loop's body but for fresh values
        after it in a branch (``if step % n == 0: totals = {}``, a periodic reset): what the
        call gets is the previous iteration's value, not one made (or detached) earlier in this one."""
        if "." in name:
            others = [a for a in self.scopes.loop_body_nodes(loop, cst.Assign)
                      if any(dotted_name(t.target) == name for t in a.targets)]
        else:
            others = [b.node for b in self.scopes.bindings(self.scopes.scope_of(loop)).get(name, [])
                      if self.tree.contains(loop.body, b.node)]
        return all(node is assign or self._resets_after(loop, node, assign, name) for node in others)

    def _resets_after(self, loop: cst.CSTNode, binding: cst.CSTNode, assign: cst.Assign, name: str) -> bool:
        """``binding`` gives ``name`` a value that does not read it, after ``assign``, under an
        ``if`` of the loop."""
        return isinstance(binding, cst.Assign) and self.tree.before(assign, binding) and not any(
            dotted_name(n) == name for kind in (cst.Name, cst.Attribute) for n in self.tree.descendants(binding.value, kind)
        ) and self.tree.under(binding, cst.If, loop)

    def step_calls(self, region: Iteration) -> list[cst.Call]:
        """Backward passes and optimizer steps in a loop body (or a method), outside nested
        functions. (Asked for every loop around each kept value: nested loops would rescan their
        bodies.)"""
        found = self._step_calls.get(region)
        if found is None:
            calls = self.scopes.loop_body_nodes(region, cst.Call) if isinstance(region, (cst.For, cst.While)) \
                else self.scopes.scope_nodes(region, cst.Call)
            found = self._step_calls[region] = [c for c in calls if self.calls.backward_roots(c) or is_step_call(c)]
        return found

    def runs_step(self, loop: Loop) -> bool:
        return bool(self.step_calls(loop))

    def steps_optimizer(self, region: Iteration) -> bool:
        """Each iteration (or call) is (at least) one training step: the loop or function steps an
        optimizer — unlike a loop over one step's environments or heads, with the optimizer step
        after it."""
        return bool(self._optimizer_steps(region))

    def _optimizer_steps(self, region: Iteration) -> list[cst.Call]:
        return [c for c in self.step_calls(region) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "step"]

    def accumulates_for_callers_step(self, loop: Loop) -> bool:
        """A loop of micro-batches whose gradients its function's callers step: it runs backward
        passes and no optimizer step, in a function with none, that every call site runs in a
        loop stepping the optimizer, or that no code of the file calls (Megatron's and verl's
        ``forward_backward_batch``, called by a trainer elsewhere): one step's worth, however many
        iterations."""
        func = self.scopes.function_of(loop)
        if func is None or not self.runs_step(loop) or self.steps_optimizer(func):
            return False
        sites = self.calls.call_sites(func)
        if not sites:  # (nothing of the function steps anything: ``v3.step()`` may be an optimizer's)
            return not any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "step"
                           for c in self.scopes.scope_nodes(func, cst.Call))
        return all((loops := self.scopes.loops_around(site)) and self.steps_optimizer(loops[0]) for site in sites)

    def differentiates_through_steps(self, region: Iteration) -> bool:
        """Unrolled, differentiable optimization (meta-learning), where a graph spanning the
        iterations is the point: a backward that builds a graph of its own (``create_graph=True``),
        or an unroll whose only gradients are ``torch.autograd.grad`` inner steps, differentiated
        as a whole by the backward or optimizer step that follows the loop (truncated unrolls)."""
        calls = self.step_calls(region)
        if any(keyword_is_true(c, "create_graph") for c in calls):
            return True
        if not isinstance(region, (cst.For, cst.While)):
            return False
        if not calls:  # (MAML's inner steps in a helper: ``fast = self._inner(net, x, y, fast)``)
            calls = [c for call in self.scopes.loop_body_nodes(region, cst.Call)
                     if (callee := self.calls.callee(call)) is not None and isinstance(callee.function, cst.FunctionDef)
                     and callee.constructs is None for c in self.step_calls(callee.function)]
        if not calls or not all(self.imports.qualify(c.func) == "torch.autograd.grad" for c in calls):
            return False
        # Differentiated after this loop, or after the loop over tasks around it; or second order
        # by a setting (``create_graph=self.second_order``, meta-learning's switch: a literal
        # ``True`` in a helper is also how an iterative estimate keeps every step's graph).
        return any(_configurable_keyword(c, "create_graph") for c in calls) or any(
            self.scopes.step_follows(loop) for loop in (region, *self.scopes.loops_around(region)))

    def iterates_loader(self, loop: Loop) -> bool:
        """``for x, y in loader``, also through a name (``pbar = tqdm(loader)``; ``for b in pbar``)."""
        if not isinstance(loop, cst.For):
            return False
        speller = cst.Module([])
        iterables = [loop.iter] + ([b.value for b in self.scopes.reaching_bindings(loop.iter.value, loop)
                                    if isinstance(b.value, cst.Call)] if isinstance(loop.iter, cst.Name) else [])
        return any(LOADER_ITERABLE.search(speller.code_for_node(i)) for i in iterables)

    def is_batch_loop(self, loop: Loop) -> bool:
        if self.iterates_loader(loop):
            return True
        for call in self.scopes.loop_body_nodes(loop, cst.Call):
            loops = self.scopes.loops_around(call)
            if not loops or loops[0] is not loop:
                continue  # inside a nested loop (that one is the batch loop) or a lambda
            if self.calls.backward_roots(call) or is_step_call(call) or self.runs_forward(call):
                return True
        return False

    def runs_forward(self, call: cst.Call) -> bool:
        """A forward pass: a model or loss call, or ``model.generate(...)``."""
        if self.calls.is_forward_pass(call):
            return True
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "generate" and \
            is_model_name(terminal_name(func.value))

    def batch_iteration(self, node: cst.CSTNode) -> Optional[Iteration]:
        """The innermost loop around ``node`` when it is a batch loop, else the function ``node``
        is in (when it is in no loop) when that runs once per batch: a per-step method, or a
        helper of the file called on every iteration of a batch loop (``loop_body(batch)``)."""
        loops = self.scopes.loops_around(node)
        if loops:
            return loops[0] if self.is_batch_loop(loops[0]) else None
        func = self.scopes.function_of(node)
        if func is None:
            return None
        if self.scopes.is_per_step_method(func) or any(
                (around := self.scopes.loops_around(site)) and self.is_batch_loop(around[0])
                and self.runs_every_iteration(site, around[0]) for site in self.calls.call_sites(func)):
            return func
        return None

    def runs_every_iteration(self, node: cst.CSTNode, iteration: Iteration) -> bool:
        """Not only under a condition — every few steps (``if step % 100 == 0:``), behind a
        configuration flag (``if args.empty_cache:``), on an error (an ``except`` handler) — except
        the capability check ``if torch.cuda.is_available():`` and the main-process check ``if
        is_root_worker():`` / ``if state.is_world_process_zero:``, which hold on every step (of
        that process)."""
        for ancestor in self.tree.ancestors(node):
            if ancestor is iteration:
                return True
            if isinstance(ancestor, cst.ExceptHandler):
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and not self._is_capability_check(ancestor.test):
                return False
        return True

    def _is_capability_check(self, test: cst.BaseExpression) -> bool:
        if isinstance(test, cst.Call) and (self.imports.qualify(test.func) or "").endswith(".is_available"):
            return True
        checked = test.func if isinstance(test, cst.Call) and not test.args else test
        return isinstance(checked, (cst.Name, cst.Attribute)) and MAIN_PROCESS_CHECK.fullmatch(terminal_name(checked) or "") is not None

def _configurable_keyword(call: cst.Call, keyword: str) -> bool:
    """``call`` passes ``keyword`` a value that is no literal (``create_graph=not first_order``)."""
    value = keyword_value(call, keyword)
    return value is not None and not (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))


def keyword_is_true(call: cst.Call, keyword: str) -> bool:
    """``call`` passes ``keyword=True`` literally."""
    value = keyword_value(call, keyword)
    return isinstance(value, cst.Name) and value.value == "True"
