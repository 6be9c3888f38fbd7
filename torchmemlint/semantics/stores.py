"""Where values are kept: stores into containers and accumulations into names, and whether the
container or accumulator outlives the iteration that produced the value."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Loop, Scopes
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import STORING_METHODS

_BOUNDED_FACTORIES = frozenset({"collections.deque", "deque"})


@dataclass(frozen=True)
class Store:
    """``container`` receives ``value`` at ``node`` (``c.append(v)``, ``c[k] = v``, ``c += [v]``)."""

    node: cst.CSTNode
    container: cst.BaseExpression
    value: cst.BaseExpression
    key: Optional[cst.BaseSlice] = None  # the subscript of ``c[k] = v``

    @property
    def overwrites_fixed_slot(self) -> bool:
        """``c["loss"] = v``: a literal key holds only the newest value, so nothing accumulates."""
        return self.key is not None and _is_literal(self.key)


def _is_literal(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.SubscriptElement):
        node = node.slice
    if isinstance(node, cst.Index):
        node = node.value
    if isinstance(node, cst.Tuple):
        return all(_is_literal(e.value) for e in node.elements)
    return isinstance(node, (cst.BaseString, cst.Integer, cst.Float))


@dataclass(frozen=True)
class Accumulation:
    """``target`` is updated from its own value and ``value``: ``t += v`` or ``t = t + v``."""

    node: Union[cst.AugAssign, cst.Assign]
    target: cst.BaseExpression
    value: cst.BaseExpression


class Stores:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes

    def stores(self) -> Iterator[Store]:
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in STORING_METHODS and call.args and \
                    self.imports.qualify(func) is None:  # torch.add(a, b), np.append(a, b): functions, not stores
                value = call.args[-1].value if func.attr.value == "insert" else call.args[0].value
                yield Store(call, func.value, value)
        for assign in self.tree.nodes(cst.Assign):
            for target in assign.targets:
                subscript = target.target
                if isinstance(subscript, cst.Subscript):
                    key = subscript.slice[0] if len(subscript.slice) == 1 else None
                    yield Store(assign, subscript.value, assign.value, key)
        for aug in self.tree.nodes(cst.AugAssign):
            if isinstance(aug.operator, cst.AddAssign) and isinstance(aug.value, cst.List):
                for element in aug.value.elements:
                    yield Store(aug, aug.target, element.value)

    def accumulations(self) -> Iterator[Accumulation]:
        for aug in self.tree.nodes(cst.AugAssign):
            if isinstance(aug.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign)) and \
                    not isinstance(aug.value, cst.List):
                yield Accumulation(aug, aug.target, aug.value)
        for assign in self.tree.nodes(cst.Assign):
            if len(assign.targets) != 1 or not isinstance(assign.value, cst.BinaryOperation):
                continue
            target = assign.targets[0].target
            spelled = dotted_name(target) if not isinstance(target, cst.Subscript) else None
            if spelled is None:
                continue
            left, right = assign.value.left, assign.value.right
            if dotted_name(left) == spelled:
                yield Accumulation(assign, target, right)
            elif dotted_name(right) == spelled and isinstance(assign.value.operator, (cst.Add, cst.Multiply)):
                yield Accumulation(assign, target, left)

    def root_name(self, expr: cst.BaseExpression) -> Optional[str]:
        while isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        return expr.value if isinstance(expr, cst.Name) else None

    def outlives(self, container: cst.BaseExpression, at: cst.CSTNode, iteration: Union[Loop, cst.FunctionDef]) -> bool:
        """Whether ``container`` (used at ``at``) survives from one iteration to the next:
        bound before the loop (and not reset in it), an attribute, or a global; bounded
        containers (``deque(maxlen=...)``) never grow, so they do not count."""
        root = self.root_name(container)
        if root is None:
            return False
        is_attribute = not isinstance(container, cst.Name)
        if isinstance(iteration, cst.FunctionDef):  # a per-step method: locals die with the call
            if root == "self" and is_attribute:
                return not self._reset_in(container, iteration)
            scope_bindings = self.scopes.bindings(iteration)
            return root in self.scopes.global_names(iteration) or (
                root not in scope_bindings and root != "self"
            )
        if self._reset_in(container, iteration.body):
            return False
        func = self.scopes.function_of(iteration)
        if func is not None and root != "self" and self.scopes.is_per_step_method(func) and \
                root in self.scopes.bindings(func):
            return False  # a local of forward()/training_step() dies with the step
        if self._is_bounded(container, at):
            return False
        if is_attribute and root == "self":
            return True
        # A name bound inside the loop body is a fresh object each iteration, unless the binding
        # is the update itself (``total = total + loss`` carries the old value over).
        return not any(
            self.tree.contains(iteration.body, b.node) and not b.augmented and not self._reads(b.value, root)
            for b in self.scopes.bindings(self.scopes.scope_of(at)).get(root, [])
        )

    def _reset_in(self, container: cst.BaseExpression, region: cst.CSTNode) -> bool:
        """Rebound (``c = []``) or emptied (``c.clear()``, ``del c[:]``) inside ``region``; an
        update that reads the old value (``self.total = self.total + loss``) is no reset."""
        spelled = dotted_name(container) if not isinstance(container, cst.Subscript) else None
        if spelled is None:
            spelled = dotted_name(container.value) if isinstance(container, cst.Subscript) else None
            if spelled is None:
                return False
        for assign in self.tree.descendants(region, cst.Assign):
            if any(dotted_name(t.target) == spelled for t in assign.targets) and not self._reads(assign.value, spelled):
                return True
        for call in self.tree.descendants(region, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "clear" and dotted_name(func.value) == spelled:
                return True
        for delete in self.tree.descendants(region, cst.Del):
            target = delete.target
            if isinstance(target, cst.Subscript) and dotted_name(target.value) == spelled:
                return True
        return False

    def _reads(self, expr: Optional[cst.BaseExpression], spelled: str) -> bool:
        """Whether ``expr`` reads the name or attribute chain ``spelled`` (``a`` or ``self.a``)."""
        if expr is None:
            return False
        node_type = cst.Name if "." not in spelled else cst.Attribute
        return any(dotted_name(n) == spelled for n in self.tree.descendants(expr, node_type))

    def _is_bounded(self, container: cst.BaseExpression, at: cst.CSTNode) -> bool:
        if not isinstance(container, cst.Name):
            return False
        for binding in self.scopes.reaching_bindings(container.value, at):
            value = binding.value
            if isinstance(value, cst.Call):
                name = self.imports.qualify(value.func) or dotted_name(value.func)
                if name in _BOUNDED_FACTORIES and any(a.keyword and a.keyword.value == "maxlen" for a in value.args):
                    return True
        return False

    def never_grows(self, store: Store) -> bool:
        """A store that cannot add an element: a fixed key (``last["loss"] = v``), or an index
        into a list (``self.cached[slot] = y`` replaces an element; a list never grows by
        item assignment)."""
        if store.overwrites_fixed_slot:
            return True
        if store.key is None:
            return False
        spelled = dotted_name(store.container)
        if spelled is None:
            return False
        if isinstance(store.container, cst.Name):
            values = [b.value for b in self.scopes.reaching_bindings(store.container.value, store.node)]
        else:
            values = [a.value for a in self.tree.nodes(cst.Assign) if any(dotted_name(t.target) == spelled for t in a.targets)]
        return bool(values) and all(_is_list(v) for v in values)

    def reset_elsewhere_in_class(self, container: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """A ``self`` container that another method (not ``__init__``) empties or rebinds, e.g.
        Lightning's ``self.validation_step_outputs.clear()`` in ``on_validation_epoch_end``."""
        cls = self.scopes.class_of(method)
        if cls is None:
            return False
        return any(
            self._reset_in(container, other)
            for other in self.tree.descendants(cls, cst.FunctionDef)
            if other is not method and other.name.value != "__init__"
        )


def _is_list(expr) -> bool:
    """``[...]``, ``[None] * n``, ``list(...)``: a Python list."""
    if isinstance(expr, cst.List):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return isinstance(expr.left, cst.List) or isinstance(expr.right, cst.List)
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "list"
