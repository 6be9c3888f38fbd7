"""Leaf tensors that require grad — parameters and inputs marked for gradients — what reads a
gradient, and what resets one.

A *parameter* here is a leaf the code trains: ``nn.Parameter(...)``, a factory called with
``requires_grad=True``, the loop variable of ``for p in model.parameters()`` /
``group["params"]``. An *input leaf* is data marked for gradients:
``x.requires_grad_()``, ``x.clone().detach().requires_grad_(True)``,
``delta = torch.zeros_like(x, requires_grad=True)``. Both get ``.grad`` from a backward
pass, and an in-place update of either outside a grad-disabled context is an error."""
from __future__ import annotations

import re
from typing import Iterable, Optional

import libcst as cst

from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.modules import TENSOR_CONSTRUCTORS, Modules
from torchmemlint.semantics.scopes import Scopes, returned_part, subscript_key
from torchmemlint.semantics.tree import Tree

PARAMETER = "parameter"
INPUT = "input"
# Methods that reset gradients (of an optimizer's parameters, or a model's).
RESET_METHODS = frozenset({"zero_grad", "clear_grad", "zero_grad_"})

PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# Factories that make a fresh tensor from a shape; the ``*_like`` ones follow a data tensor
# (adversarial perturbations), so their leaves count as inputs.
SHAPE_FACTORIES = frozenset({
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
    "linspace", "eye", "normal", "from_numpy",
})
_LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"})
# In-place tensor methods that change a tensor's values.
IN_PLACE_UPDATES = frozenset({
    "add_", "sub_", "mul_", "div_", "addcdiv_", "addcmul_", "copy_", "lerp_", "clamp_", "clamp_min_",
    "clamp_max_", "zero_", "fill_", "neg_", "sign_", "set_", "masked_fill_", "index_add_",
    "uniform_", "normal_", "exp_", "sqrt_", "pow_", "abs_",
})
# Loop iterables of parameters: ``model.parameters()``, ``group["params"]``, ``param_groups``.
_PARAMETER_ITERABLE = re.compile(r"parameters\(|\[\s*['\"]params['\"]\s*\]|(?:\b|_)params\b|\bparameters\b|weights\b")
_OPTIMIZER_BASE = re.compile(r"(?:^|\.)Optimizer$|^torch\.optim\.")


class Parameters:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, modules: Modules, calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.modules = modules
        self.calls = calls

    # -- which tensors are leaves that require grad -------------------------------------
    def leaf_kind(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None, depth: int = 0) -> Optional[str]:
        """``PARAMETER`` or ``INPUT`` for a leaf tensor that requires grad at ``at``, else None
        (``depth``: how many call sites up the value was followed)."""
        at = at if at is not None else expr
        if isinstance(expr, cst.Name):
            return self._name_leaf_kind(expr.value, at, depth)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("data", "grad"):
                return None
            if dotted_name(expr.value) == "self":
                value = self._self_attribute_value(expr.attr.value, at)
                if isinstance(value, cst.Name):  # ``self.w = w``: what the constructor was given
                    return self._name_leaf_kind(value.value, value, depth + 1)
                if value is not None:
                    return self.created_leaf(value)
            if expr.attr.value in ("weight", "bias") and self.modules.is_module(expr.value, at):
                return PARAMETER
        return None

    def _name_leaf_kind(self, name: str, at: cst.CSTNode, depth: int = 0) -> Optional[str]:
        kind: Optional[str] = None
        bindings = self.scopes.bindings_of(name, at)
        for binding in bindings:
            if isinstance(binding.node, cst.For):
                if iterates_parameters(binding.node, name):
                    return PARAMETER
            elif isinstance(binding.value, cst.Name) and depth < 3:  # ``weight = w``: an alias
                kind = kind or self._name_leaf_kind(binding.value.value, binding.node, depth + 1)
            elif binding.value is not None:
                kind = kind or self.created_leaf(binding.value) or (
                    self._returned_leaf_kind(binding.value, binding.index, binding.node, depth) if depth < 3 else None)
            elif isinstance(binding.node, cst.Param) and depth < 3:
                kind = kind or self._passed_leaf_kind(binding.node, depth)
        if kind is None and self._marked_before(name, at):
            shaped = any(b.value is not None and self._factory(b.value) == "shape" for b in bindings)
            kind = PARAMETER if shaped else INPUT
        return kind

    def _returned_leaf_kind(self, value: cst.BaseExpression, index: Optional[int], at: cst.CSTNode,
                            depth: int) -> Optional[str]:
        """The leaf a helper of the file returns (``data, target, loss = compute_step(...)``,
        ``data = outputs["data"]`` of ``outputs = compute_step(...)``): what its return
        statements give at that position or key."""
        key = None
        if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and index is None:
            key = subscript_key(value)
            bindings = self.scopes.bindings_of(value.value.value, at) if key is not None else []
            value = bindings[0].value if len(bindings) == 1 and bindings[0].index is None else None
        callee = self.calls.callee(value) if isinstance(value, cst.Call) else None
        if callee is None or not isinstance(callee.function, cst.FunctionDef):
            return None
        for returned in self.scopes.scope_nodes(callee.function, cst.Return):
            part = returned_part(returned.value, index, key)
            kind = self.leaf_kind(part, returned, depth + 1) if part is not None else None
            if kind is not None:
                return kind
        return None

    def _passed_leaf_kind(self, param: cst.Param, depth: int) -> Optional[str]:
        """The leaf a helper's parameter receives at its call sites (``loop_body(X, w, b)`` with
        ``w = torch.randn(3, requires_grad=True)``): the kind of the first leaf passed."""
        return next((kind for expr, where in self.calls.passed_to(param)
                     if (kind := self.leaf_kind(expr, where, depth + 1)) is not None), None)

    def created_leaf(self, value: cst.BaseExpression) -> Optional[str]:
        """What leaf ``value`` creates: ``nn.Parameter(w)`` / ``torch.randn(3, requires_grad=True)``
        -> PARAMETER; ``x.clone().detach().requires_grad_()`` / ``Variable(x, requires_grad=True)``
        -> INPUT; anything else -> None."""
        if not isinstance(value, cst.Call):
            return None
        func = value.func
        qualified = self.imports.qualify(func)
        if qualified in PARAMETER_CLASSES:
            return None if _keyword_is(value, "requires_grad", "False") else PARAMETER
        if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_":
            if not marks_requiring_grad(value):
                return None
            return PARAMETER if self._factory(func.value) == "shape" else INPUT
        if _keyword_is(value, "requires_grad", "True"):
            if qualified in VARIABLE:  # Variable(torch.randn(3), requires_grad=True) is a weight
                wrapped = value.args[0].value if value.args and value.args[0].keyword is None else None
                return PARAMETER if wrapped is not None and self._factory(wrapped) == "shape" else INPUT
            return PARAMETER if self._factory(value) == "shape" else INPUT
        return None

    def _factory(self, expr: cst.BaseExpression) -> Optional[str]:
        """``"shape"`` for ``torch.randn(3, 4)`` (possibly ``.to(dev)``-ed), ``"like"`` for
        ``torch.zeros_like(x)``, else None."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value in ("to", "cuda", "float", "double", "uniform_", "normal_", "fill_"):
            expr = expr.func.value
        if not isinstance(expr, cst.Call):
            return None
        qualified = self.imports.qualify(expr.func) or ""
        last = qualified.split(".")[-1]
        if qualified.startswith("torch.") and (last in SHAPE_FACTORIES or qualified in TENSOR_CONSTRUCTORS):
            return "shape"
        if qualified.startswith("torch.") and last in _LIKE_FACTORIES:
            return "like"
        return None

    def _marked_before(self, name: str, at: cst.CSTNode) -> bool:
        """``name.requires_grad = True`` or ``name.requires_grad_()`` earlier in the same scope."""
        scope = self.scopes.scope_of(at)
        for assign in self.scopes.scope_nodes(scope, cst.Assign):
            if self.tree.before(assign, at) and _literal(assign.value, "True") and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" and
                isinstance(t.target.value, cst.Name) and t.target.value.value == name for t in assign.targets
            ):
                return True
        for call in self.scopes.scope_nodes(scope, cst.Call):
            func = call.func
            if self.tree.before(call, at) and marks_requiring_grad(call) and isinstance(func.value, cst.Name) and \
                    func.value.value == name:
                return True
        return False

    def _self_attribute_value(self, attribute: str, at: cst.CSTNode) -> Optional[cst.BaseExpression]:
        method = self.scopes.function_of(at)
        cls = self.scopes.class_of(method) if method is not None else None
        if cls is None:
            return None
        for assign in self.tree.descendants(cls, cst.Assign):
            for target in assign.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and t.attr.value == attribute and dotted_name(t.value) == "self":
                    return assign.value
        return None

    # -- gradients ----------------------------------------------------------------------
    def reads_gradient(self, expr: cst.CSTNode, at: cst.CSTNode, depth: int = 4) -> bool:
        """Whether ``expr`` uses a gradient: ``p.grad``, a name bound from one (``d_p = p.grad``),
        or from ``torch.autograd.grad(...)`` (also through ``for p, g in zip(params, grads)``, and
        a parameter the callers hand one in)."""
        for attribute in self.tree.descendants(expr, cst.Attribute):
            if attribute.attr.value == "grad":
                return True
        if depth == 0:
            return False
        for call in self.tree.descendants(expr, cst.Call):
            if self.imports.qualify(call.func) == "torch.autograd.grad":
                return True
        for name in self.tree.descendants(expr, cst.Name):
            for binding in self.scopes.bindings_of(name.value, at):
                if isinstance(binding.node, cst.Param):  # what the callers hand in (``compute_hessian(dw)``)
                    if any(self.reads_gradient(passed, where, depth - 1)
                           for passed, where in self.calls.passed_to(binding.node)):
                        return True
                    continue
                source = binding.node.iter if isinstance(binding.node, cst.For) else binding.value
                if source is not None and binding.node is not at and \
                        self.reads_gradient(source, binding.node, depth - 1):
                    return True
        return False

    def in_optimizer_step(self, node: cst.CSTNode) -> bool:
        return in_optimizer_step(self.scopes, node)

    def resets_gradients(self, call: cst.Call) -> bool:
        """A call that resets gradients (what TML002 asks): ``zero_grad()`` of an optimizer or a
        model, ``p.grad.zero_()``, ``set_to_none_``, or a helper of this file that calls one, or
        a method of the file's that sets ``p.grad = None`` (a mixed-precision optimizer wrapper
        whose ``step()`` clears the model's gradients once it has copied them)."""
        func = call.func
        if isinstance(func, cst.Attribute) and (func.attr.value in RESET_METHODS or
                                                func.attr.value in ("zero_", "set_to_none_")):
            return True
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value in RESET_METHODS
               for callee in self.local_callees(call) for c in self.tree.descendants(callee, cst.Call)):
            return True
        callee = self.calls.callee(call)
        if callee is None or not isinstance(callee.function, cst.FunctionDef) or self.tree.contains(callee.function, call):
            return False
        return any(self.breaks_grad_cycle(node) for node_type in (cst.Assign, cst.Del)
                   for node in self.scopes.scope_nodes(callee.function, node_type))

    def clears_grad_attribute(self, region: cst.CSTNode) -> bool:
        """``p.grad = None`` or ``del p.grad`` in a loop body or function (nested loops over
        parameters included)."""
        if isinstance(region, cst.FunctionDef):
            assigns, deletes = self.scopes.scope_nodes(region, cst.Assign), self.scopes.scope_nodes(region, cst.Del)
        else:
            assigns = self.scopes.loop_body_nodes(region, cst.Assign)
            deletes = self.scopes.loop_body_nodes(region, cst.Del)
        return any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad"
                   for a in assigns for t in a.targets) or \
            any(isinstance(d.target, cst.Attribute) and d.target.attr.value == "grad" for d in deletes)

    def breaks_grad_cycle(self, node: cst.CSTNode) -> bool:
        """A reset that drops a ``.grad`` tensor's graph: ``zero_grad()`` (either setting),
        ``p.grad = None``, ``del p.grad``, ``p.grad.detach_()``. ``p.grad.zero_()`` keeps the
        graph (measured: memory still grows), so it does not count."""
        if isinstance(node, cst.Call):
            func = node.func
            if not isinstance(func, cst.Attribute):
                return False
            if func.attr.value == "zero_grad":
                return True
            return func.attr.value == "detach_" and isinstance(func.value, cst.Attribute) and \
                func.value.attr.value == "grad"
        if isinstance(node, cst.Assign):
            return any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in node.targets) \
                and (_literal(node.value, "None") or "detach" in dotted_chain_methods(node.value))
        if isinstance(node, cst.Del):
            return isinstance(node.target, cst.Attribute) and node.target.attr.value == "grad"
        return False

    def resets_in(self, region: cst.CSTNode, _seen: frozenset = frozenset()) -> bool:
        """A graph-dropping gradient reset in ``region``, directly or in a function of this file
        it calls (``self.reset_grads()``, ``zero_all(model)``)."""
        for node_type in (cst.Call, cst.Assign, cst.Del):
            if any(self.breaks_grad_cycle(n) for n in self.tree.descendants(region, node_type)):
                return True
        for call in self.tree.descendants(region, cst.Call):
            for callee in self.local_callees(call):
                if callee not in _seen and self.resets_in(callee, _seen | {callee}):
                    return True
        return False

    def local_callees(self, call: cst.Call) -> Iterable[cst.FunctionDef]:
        """Functions of this file a call may run: ``helper(...)``, ``self.helper(...)``, or a
        method of an object ``self`` holds (``self.owner._reset_grads()``)."""
        func = call.func
        if isinstance(func, cst.Name):
            return self.scopes.functions_by_name.get(func.value, [])
        receiver = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if receiver == "self":
            return self.scopes.functions_by_name.get(func.attr.value, [])
        if receiver is not None and receiver.startswith("self."):  # (``self.opt.step()`` is no call of ``step`` itself)
            return [f for f in self.scopes.functions_by_name.get(func.attr.value, []) if not self.tree.contains(f, call)]
        return []


def in_optimizer_step(scopes: Scopes, node: cst.CSTNode) -> bool:
    """Inside ``step`` of a ``torch.optim.Optimizer`` subclass, where every parameter the loop
    visits is a leaf that requires grad."""
    func = scopes.function_of(node)
    if func is None or func.name.value != "step":
        return False
    cls = scopes.class_of(func)
    return cls is not None and any(could_be_optimizer_base(b) for b in scopes.class_bases(cls))


def could_be_optimizer_base(name: str) -> bool:
    """A base class name (qualified, or as spelled) of a ``torch.optim`` optimizer."""
    return bool(_OPTIMIZER_BASE.search(name))


def iterates_parameters(loop: cst.For, name: str) -> bool:
    """``for p in model.parameters()``, ``for name, p in model.named_parameters()``,
    ``for p in group["params"]``, ``for p, g in zip(params, grads)`` (``p`` only)."""
    target, iterable = loop.target, loop.iter
    if isinstance(target, cst.Name):
        return target.value == name and bool(_PARAMETER_ITERABLE.search(_code(iterable)))
    if not isinstance(target, cst.Tuple):
        return False
    names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
    if name not in names:
        return False
    position = names.index(name)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
            iterable.func.attr.value == "named_parameters":
        return position == 1
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "zip" and \
            len(iterable.args) == len(names):
        return bool(_PARAMETER_ITERABLE.search(_code(iterable.args[position].value)))
    return False


def dotted_chain_methods(expr: cst.BaseExpression) -> list[str]:
    """Method names of a call chain, outermost first: ``(w - g).detach().requires_grad_()`` ->
    ``["requires_grad_", "detach"]``."""
    methods = []
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        methods.append(expr.func.attr.value)
        expr = expr.func.value
    return methods


def _keyword_is(call: cst.Call, keyword: str, literal: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword and _literal(a.value, literal) for a in call.args)


def marks_requiring_grad(call: cst.Call) -> bool:
    """``x.requires_grad_()`` or ``x.requires_grad_(True)``."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" and (
        not call.args or _literal(call.args[0].value, "True"))


def _literal(expr: Optional[cst.BaseExpression], value: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == value


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)

