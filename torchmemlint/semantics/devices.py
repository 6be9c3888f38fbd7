"""Which expressions surely name a CUDA device, and which calls surely move data onto one.

Stricter than ``Values.is_device_tensor`` (which treats any ``.to(device)`` as a device move): a
rule that reports *where* CUDA is touched needs proof, e.g. ``"cuda"``, ``torch.device("cuda:0")``,
``"cuda" if torch.cuda.is_available() else "cpu"``, or a name or ``self`` attribute bound to one."""
from __future__ import annotations

from functools import cached_property
from typing import Optional

import libcst as cst

from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Scopes, assigned_pairs
from torchmemlint.semantics.tree import Tree

MAX_DEPTH = 8


class Devices:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls

    def moves_to_cuda(self, call: cst.Call) -> bool:
        """``x.cuda()``, ``x.to(<cuda>)``, or a ``torch`` factory with ``device=<cuda>``."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "cuda" and \
                self.imports.qualify(func) is None:  # not ``torch.cuda`` the module
            return True
        if isinstance(func, cst.Attribute) and func.attr.value == "to":
            return any((a.keyword is None or a.keyword.value == "device") and self.is_cuda(a.value, call)
                       for a in call.args)
        qualified = self.imports.qualify(func) or ""
        if qualified.startswith("torch."):
            return any(a.keyword is not None and a.keyword.value == "device" and self.is_cuda(a.value, call)
                       for a in call.args)
        return False

    def is_cuda(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
        if depth > MAX_DEPTH:
            return False
        depth += 1
        if isinstance(expr, cst.SimpleString):
            value = expr.evaluated_value
            return isinstance(value, str) and value.startswith("cuda")
        if isinstance(expr, cst.FormattedString):
            first = expr.parts[0] if expr.parts else None
            return isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")
        if isinstance(expr, cst.IfExp):  # "cuda" if torch.cuda.is_available() else "cpu"
            return self.is_cuda(expr.body, at, depth) or self.is_cuda(expr.orelse, at, depth)
        if isinstance(expr, cst.Call):
            if self.imports.qualify(expr.func) == "torch.device" and expr.args:
                return self.is_cuda(expr.args[0].value, at, depth)
            callee = self.calls.callee(expr)  # ``get_device()`` of the file: what it returns
            return callee is not None and isinstance(callee.function, cst.FunctionDef) and callee.constructs is None \
                and any(ret.value is not None and self.is_cuda(ret.value, ret, depth)
                        for ret in self.scopes.scope_nodes(callee.function, cst.Return))
        if isinstance(expr, cst.Name):
            return any(value is not None and self.is_cuda(value, node, depth)
                       for value, node in self._name_values(expr.value, at))
        if isinstance(expr, cst.Attribute) and dotted_name(expr.value) == "self":
            return any(self.is_cuda(value, node, depth) for value, node in self._self_attribute_values(expr, at))
        return False

    def _name_values(self, name: str, at: cst.CSTNode) -> list[tuple[Optional[cst.BaseExpression], cst.CSTNode]]:
        """Values bound to ``name`` where ``at`` reads it: in its own function, else at module level."""
        bindings = self.scopes.reaching_bindings(name, at)
        if not bindings and self.scopes.function_of(at) is not None:
            bindings = self.scopes.bindings(self.tree.module).get(name, [])
        # a parameter's default stands for its value (``def __init__(self, device="cuda")``), and
        # so does what the file's callers pass for it (also through ``partial(f, device=device)``)
        values = [(b.node.default if isinstance(b.node, cst.Param) else b.value, b.node) for b in bindings]
        for binding in bindings:
            if isinstance(binding.node, cst.Param):
                values += self._passed_for(binding.node)
        return values

    @cached_property
    def _partials(self) -> list[cst.Call]:
        """The file's ``functools.partial(...)`` calls, however ``partial`` is imported."""
        return [c for c in self.tree.nodes(cst.Call)
                if (self.imports.qualify(c.func) or dotted_name(c.func)) in ("functools.partial", "partial")]

    def _passed_for(self, param: cst.Param) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """``Calls.passed_to``, and the keyword ``partial(f, device=device)`` binds for it."""
        function = self.scopes.function_of(param)
        if function is None:
            return []
        name = param.name.value
        passed = self.calls.passed_to(param)
        for bound in self._partials:
            if bound.args and dotted_name(bound.args[0].value) == function.name.value:
                passed += [(a.value, bound) for a in bound.args[1:] if a.keyword is not None and a.keyword.value == name]
        return passed

    def _self_attribute_values(self, attribute: cst.Attribute, at: cst.CSTNode) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """Values assigned to ``self.<attr>`` anywhere in the class of ``at``."""
        func = self.scopes.function_of(at)
        cls = self.scopes.class_of(func) if func is not None else None
        if cls is None:
            return []
        found = []
        for assign in self.tree.descendants(cls, cst.Assign):
            for target in assign.targets:
                found += [(value, assign) for assigned, value in assigned_pairs(target.target, assign.value)
                          if isinstance(assigned, cst.Attribute) and dotted_name(assigned.value) == "self"
                          and assigned.attr.value == attribute.attr.value]
        return found
