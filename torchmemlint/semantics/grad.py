"""Grad-disabled contexts: where autograd records nothing, so no value there holds a graph.

``with torch.no_grad()`` / ``inference_mode()`` / ``set_grad_enabled(False)``, functions decorated
with them, a preceding plain ``torch.set_grad_enabled(False)`` call, Lightning's evaluation hooks,
and functions whose every call site is already grad-disabled. ``set_grad_enabled(phase == "train")``
disables grad unless its block runs a backward (then the training phase records a graph there)."""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import LIGHTNING_NO_GRAD_METHODS, Scopes, named_parameter
from torchmemlint.semantics.tree import Tree

DISABLING = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode",
    "torch.optim.optimizer._use_grad_for_differentiable",
})
ENABLING = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                              "torch.autograd.grad_mode.set_grad_enabled"})


# A decorator or context manager of a project's own, named for what it does; torch's optimizers'
# ``@_use_grad_for_differentiable`` turns grad off unless the optimizer was built ``differentiable=True``.
_DISABLING_NAME = re.compile(r"(?:^|_)(?:no_grad|inference_mode)$|^_use_grad_for_differentiable$")


class GradContexts:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls
        self._function_cache: dict[cst.FunctionDef, bool] = {}
        self._set_grad_cache: dict[cst.CSTNode, list[tuple[int, bool]]] = {}
        self._differentiating_blocks: dict[cst.With, bool] = {}

    def context_effect(self, expr: cst.BaseExpression) -> Optional[bool]:
        """True if entering ``expr`` (a with-item or decorator) disables grad, False if it
        enables it, None if it has no effect on grad mode."""
        call_args: Optional[tuple] = None
        if isinstance(expr, cst.Call):
            call_args = tuple(expr.args)
            expr = expr.func
        name = self.imports.qualify(expr)
        if name is None or not name.startswith("torch."):
            # A project's own wrapper named for it (yolov5's ``@smart_inference_mode()``).
            spelled = (name or dotted_name(expr) or "").rsplit(".", 1)[-1]
            return True if _DISABLING_NAME.search(spelled) else None
        if name in DISABLING:
            return True
        if name in ENABLING:
            return False
        if name in SET_GRAD_ENABLED and call_args:
            value = call_args[0].value
            if isinstance(value, cst.Name) and value.value == "True":
                return False
            # ``set_grad_enabled(phase == "train")``: the evaluation phase runs without grad;
            # precision first, so treat a non-literal mode as disabling.
            return True
        return None

    def is_disabled(self, node: cst.CSTNode) -> bool:
        """Whether autograd is off when ``node`` runs."""
        for ancestor in self.tree.ancestors(node):
            ancestor_type = type(ancestor)  # (not isinstance: LibCST's ABC metaclass makes each miss cost)
            if ancestor_type is cst.With:
                for item in ancestor.items:
                    effect = self.context_effect(item.item)
                    if effect is not None and self.tree.contains(ancestor.body, node):
                        return effect and not self._differentiated_in_some_mode(item.item, ancestor)
                if self._entered_disabling(ancestor, node):
                    return True
            elif ancestor_type is cst.FunctionDef:
                return self._set_grad_call_before(node, ancestor) or self.is_function_disabled(ancestor)
            elif ancestor_type is cst.Lambda:
                return False
        return self._set_grad_call_before(node, self.tree.module)

    def _differentiated_in_some_mode(self, item: cst.BaseExpression, block: cst.With) -> bool:
        """``with torch.set_grad_enabled(phase == "train"):`` around a backward: the block runs with
        grad on in the phase that differentiates, so what it computes may hold a graph (the
        evaluation phase's forward, without a backward, is still read as grad-disabled)."""
        if not (isinstance(item, cst.Call) and item.args and self.imports.qualify(item.func) in SET_GRAD_ENABLED):
            return False
        known = self._differentiating_blocks.get(block)  # (asked for every node of the block: once per block)
        if known is None:
            known = self._differentiating_blocks[block] = any(
                self.calls.backward_roots(call) for call in self.tree.descendants(block.body, cst.Call))
        return known

    def _entered_disabling(self, block: cst.With, node: cst.CSTNode) -> bool:
        """``with ExitStack() as stack: stack.enter_context(torch.no_grad()); ...`` (detectron2's
        ``inference_on_dataset``): grad is off after the ``enter_context`` call in the block."""
        for call in self.tree.descendants(block.body, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "enter_context" and call.args and \
                    self.context_effect(call.args[0].value) and self.tree.before(call, node):
                return True
        return False

    def _set_grad_call_before(self, node: cst.CSTNode, scope) -> bool:
        """A plain ``torch.set_grad_enabled(False)`` statement earlier in the same scope."""
        state = False
        for position, disables in self._set_grad_calls(scope):
            if position >= self.tree.start[node]:
                break
            state = disables
        return state

    def _set_grad_calls(self, scope) -> list[tuple[int, bool]]:
        """Where plain ``set_grad_enabled(...)`` statements switch grad mode in ``scope``."""
        cached = self._set_grad_cache.get(scope)
        if cached is None:
            cached = []
            for expr_stmt in self.scopes.scope_nodes(scope, cst.Expr):
                call = expr_stmt.value
                if isinstance(call, cst.Call) and call.args and self.imports.qualify(call.func) in SET_GRAD_ENABLED:
                    value = call.args[0].value
                    cached.append((self.tree.start[expr_stmt], isinstance(value, cst.Name) and value.value == "False"))
            self._set_grad_cache[scope] = cached
        return cached

    def is_function_disabled(self, func: cst.FunctionDef) -> bool:
        cached = self._function_cache.get(func)
        if cached is not None:
            return cached
        self._function_cache[func] = False  # recursion guard for mutually calling functions
        result = self._decorated_disabled(func) or self._lightning_eval_hook(func) or self._pipeline_forward(func) or \
            self._metric_update(func) or self._only_called_disabled(func)
        self._function_cache[func] = result
        return result

    def _decorated_disabled(self, func: cst.FunctionDef) -> bool:
        return any(self.context_effect(d.decorator) for d in func.decorators)

    def _lightning_eval_hook(self, func: cst.FunctionDef) -> bool:
        return func.name.value in LIGHTNING_NO_GRAD_METHODS and self.scopes.is_lightning_module(
            self.scopes.class_of(func)
        )

    def _pipeline_forward(self, func: cst.FunctionDef) -> bool:
        """``_forward`` of a Hugging Face ``Pipeline``: the base class's ``forward`` runs it under
        the pipeline's inference context (``torch.no_grad()``)."""
        cls = self.scopes.class_of(func)
        return func.name.value == "_forward" and cls is not None and any(
            base.rsplit(".", 1)[-1] == "Pipeline" for base in self.scopes.class_bases(cls))

    def _metric_update(self, func: cst.FunctionDef) -> bool:
        """``update`` of a torchmetrics ``Metric``: the base class wraps it to run with grad
        disabled (unless the metric sets ``_enable_grad``), so what it keeps holds no graph."""
        cls = self.scopes.class_of(func)
        return func.name.value == "update" and cls is not None and any(
            base in ("torchmetrics.Metric", "torchmetrics.metric.Metric") for base in self.scopes.class_bases(cls)) \
            and not any(a.attr.value == "_enable_grad" for a in self.tree.descendants(cls, cst.Attribute))

    def _only_called_disabled(self, func: cst.FunctionDef) -> bool:
        """An evaluation helper whose every call site in this file is already grad-disabled; or a
        method never called by name but dispatched through a table of the module that names it
        (``getattr(type(self), MODES[mode])``, ``"_assisted_decoding"`` among ``MODES``' values),
        where every such dispatch is."""
        sites = self.calls.call_sites(func)
        if sites:
            return all(self.is_disabled(site) for site in sites)
        chosen = self.calls.chosen_sites(func)
        if chosen:
            return all(self.is_disabled(call) or self._chosen_only_under_no_grad(call, choice, taken)
                       for call, choice, taken in chosen)
        if self.scopes.class_of(func) is None or self.calls.calls_spelled(func.name.value, method=True):
            return False
        dispatches = [c for c in self.calls.calls_spelled("getattr", method=False)
                      if len(c.args) >= 2 and func.name.value in self._table_names(c.args[1].value)]
        return bool(dispatches) and all(self.is_disabled(site) for site in dispatches)

    def _chosen_only_under_no_grad(self, call: cst.Call, choice: cst.IfExp, taken: bool) -> bool:
        """``step = self.val_step if validation else self.train_step`` in a function whose callers
        pass the flag that picks this branch (a literal, or the parameter's default) only under a
        grad-disabled context (``with torch.no_grad(): self._mini_batch(validation=True)``)."""
        caller = self.scopes.function_of(call)
        test = choice.test
        if caller is None or not isinstance(test, cst.Name):
            return False
        param = named_parameter(caller, test.value)
        sites = self.calls.call_sites(caller)
        if param is None or not sites:
            return False
        for site in sites:
            callee = self.calls.callee(site)
            given = self.calls.arguments(site, callee).get(test.value) if callee is not None else None
            flag = given[0][0] if given else param.default
            if isinstance(flag, cst.Name) and flag.value in ("True", "False") and (flag.value == "True") != taken:
                continue  # this call takes the other branch
            if not self.is_disabled(site):
                return False
        return True

    def _table_names(self, key: cst.BaseExpression) -> frozenset[str]:
        """The string values of the module-level dict ``key`` looks up (``MODES[mode]``)."""
        if not (isinstance(key, cst.Subscript) and isinstance(key.value, cst.Name)):
            return frozenset()
        bindings = self.scopes.bindings(self.tree.module).get(key.value.value, [])
        return frozenset(element.value.value[1:-1] for b in bindings if isinstance(b.value, cst.Dict)
                         for element in b.value.elements
                         if isinstance(element, cst.DictElement) and isinstance(element.value, cst.SimpleString))
