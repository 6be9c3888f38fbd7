"""Hidden stores (RULES.md vocabulary): a value kept without a visible ``append``, because it is
passed to a method of a persistent object whose body keeps it, e.g. ``meter.update(loss)`` where
``update`` does ``self.sum += val * n``, or ``tracker.add(preds)`` doing
``self.preds.append(preds)``.

Only classes defined in this file are looked into; the object must be built from one of them
(``meter = AverageMeter()``, or ``self.meter = AverageMeter()`` anywhere in the class)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Iterator, Optional

import libcst as cst

from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.scopes import Scopes
from torchmemlint.semantics.stores import STORING_METHODS, Store
from torchmemlint.semantics.tree import Tree


@dataclass(frozen=True)
class KeptParameter:
    """Parameter ``index`` (after ``self``) / ``name`` of a method is kept on the instance,
    appended to a list (``grows``) or added into a running total (the graph chain grows)."""

    index: int
    name: str
    appended: bool


class HiddenStores:
    def __init__(self, tree: Tree, scopes: Scopes) -> None:
        self.tree = tree
        self.scopes = scopes
        self._kept: dict[cst.FunctionDef, list[KeptParameter]] = {}

    def with_visible(self, visible: Iterable[Store], appended_only: bool = False) -> Iterator[Store]:
        """The visible stores, except calls of a method of this file's classes (``store.add(x)``
        is judged by ``add``'s body, not by its name), then the hidden ones."""
        for store in visible:
            if not (isinstance(store.node, cst.Call) and self._callee(store.node) is not None):
                yield store
        yield from self.stores(appended_only)

    def stores(self, appended_only: bool = False) -> Iterator[Store]:
        """A Store per argument of a call that the callee keeps on its instance: the container
        is the receiver (``meter``), the value the argument (``loss``)."""
        for call in self.tree.nodes(cst.Call):
            method = self._callee(call)
            if method is None:
                continue
            func = call.func
            for kept in self.kept_parameters(method):
                if appended_only and not kept.appended:
                    continue
                value = _argument(call, kept)
                if value is not None:
                    yield Store(call, func.value, value)

    def _callee(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in self._method_names or \
                dotted_name(func.value) == "self":
            return None
        return self._method_of_receiver(func.value, func.attr.value, call)

    @cached_property
    def _method_names(self) -> frozenset[str]:
        """The names of the methods of this file's classes: a call of any other name has no
        callee here (and its receiver need not be resolved)."""
        return frozenset(func.name.value for func in self.tree.nodes(cst.FunctionDef)
                         if self.scopes.class_of(func) is not None)

    def kept_parameters(self, method: cst.FunctionDef) -> list[KeptParameter]:
        cached = self._kept.get(method)
        if cached is not None:
            return cached
        params = [p.name.value for p in method.params.params][1:]  # after ``self``
        kept: list[KeptParameter] = []
        for index, name in enumerate(params):
            appended = self._appended_to_self(method, name)
            if appended or self._added_to_self(method, name):
                kept.append(KeptParameter(index, name, appended))
        self._kept[method] = kept
        return kept

    def _appended_to_self(self, method: cst.FunctionDef, name: str) -> bool:
        for call in self.scopes.scope_nodes(method, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in STORING_METHODS and call.args and \
                    _root(func.value) == "self" and _keeps_as_is(self.tree, call.args[-1].value, name) and \
                    not self._rebound_in(method, func.value):
                return True
        return False

    def _added_to_self(self, method: cst.FunctionDef, name: str) -> bool:
        for aug in self.scopes.scope_nodes(method, cst.AugAssign):
            if isinstance(aug.operator, (cst.AddAssign, cst.SubtractAssign)) and _root(aug.target) == "self" and \
                    _keeps_as_is(self.tree, aug.value, name) and not self._rebound_in(method, aug.target):
                return True
        for assign in self.scopes.scope_nodes(method, cst.Assign):
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            spelled = dotted_name(target) if target is not None else None
            if spelled and spelled.startswith("self.") and isinstance(assign.value, cst.BinaryOperation) and \
                    _keeps_as_is(self.tree, assign.value, name) and _reads_spelled(self.tree, assign.value, spelled):
                return True  # self.total = self.total + val
        return False

    def _rebound_in(self, method: cst.FunctionDef, container: cst.BaseExpression) -> bool:
        """``self.activations = []`` (or ``self.total = 0``) in the method itself: each call
        starts afresh, so nothing piles up across calls."""
        spelled = dotted_name(container)
        return spelled is not None and any(
            any(dotted_name(t.target) == spelled for t in assign.targets) and not _reads_spelled(self.tree, assign.value, spelled)
            for assign in self.scopes.scope_nodes(method, cst.Assign)
        )

    def _method_of_receiver(self, receiver: cst.BaseExpression, method_name: str,
                            at: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The method ``method_name`` of the file's class that ``receiver`` was built from.
        A class that runs a backward itself (a REINFORCE policy's ``put_data`` / ``train_net``,
        a PPO rollout buffer) keeps its data to differentiate it: intended, not followed."""
        for cls_name in self.scopes.classes_built_into(receiver, at):
            cls = self.scopes.classes_by_name.get(cls_name)
            if cls is None or self._trains_itself(cls):
                continue
            for func in self.tree.descendants(cls, cst.FunctionDef):
                if func.name.value == method_name and self.scopes.class_of(func) is cls:
                    return func
        return None

    def _trains_itself(self, cls: cst.ClassDef) -> bool:
        return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("backward", "manual_backward")
                   for c in self.tree.descendants(cls, cst.Call))


def _argument(call: cst.Call, kept: KeptParameter) -> Optional[cst.BaseExpression]:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if kept.index < len(positional):
        return positional[kept.index].value
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == kept.name), None)


def _root(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _keeps_as_is(tree: Tree, expr: cst.BaseExpression, name: str) -> bool:
    """``expr`` holds the parameter itself (``val``, ``val * n``, ``(val, n)``), not something
    computed from it by a call (``val.item()``, ``val.detach().cpu()``)."""
    return any(n.value == name for n in tree.descendants(expr, cst.Name)) and not tree.descendants(expr, cst.Call)


def _reads_spelled(tree: Tree, expr: cst.BaseExpression, spelled: str) -> bool:
    return any(dotted_name(a) == spelled for a in tree.descendants(expr, cst.Attribute))
