"""Custom ``torch.autograd.Function`` classes: their ``ctx`` methods, what they store on ``ctx``,
and which of those values are tensors.

Inside ``forward`` there is no graph to follow (it runs under no_grad), so whether a value is a
tensor is read from the code itself: torch calls and tensor methods return tensors, ``.shape`` /
``.size()`` / ``.item()`` / literals do not, and a parameter is a tensor when the code uses it as
one (calls a tensor method on it, reads ``.shape``, saves it, passes it first to a torch
function, multiplies it with ``@``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from torchmemlint.semantics.calls import Calls, Callee
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.modules import TENSOR_METHODS
from torchmemlint.semantics.params import SHAPE_FACTORIES
from torchmemlint.semantics.scopes import Scopes, returned_part
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import torch_gives_no_tensor

FUNCTION_BASES = frozenset({
    "torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction",
    "torch.autograd.function.once_differentiable",
})
CTX_METHODS = ("forward", "setup_context")
# Tensor attributes that are tensors themselves, and those that are metadata.
TENSOR_VALUED_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "real", "imag"})
METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "is_cuda", "requires_grad", "ndim", "layout",
                                 "is_sparse", "is_leaf", "grad_fn", "names"})
# Metadata that modules, environments and trainers carry as well: a tensor's only if nothing else
# read of the same name is foreign to tensors.
_SHARED_METADATA = frozenset({"device", "dtype"})
# Tensor methods whose result is not a tensor.
NON_TENSOR_METHODS = frozenset({"size", "dim", "numel", "item", "tolist", "stride", "data_ptr", "element_size",
                                "nelement", "is_contiguous", "get_device", "storage_offset", "__len__",
                                "is_floating_point", "type", "untyped_storage", "numpy"})
_USED_AS_TENSOR_METHODS = TENSOR_METHODS | NON_TENSOR_METHODS | frozenset({
    "to", "cuda", "cpu", "float", "half", "double", "long", "int", "bool", "type_as", "new_tensor", "masked_fill_",
    "add_", "mul_", "copy_", "zero_", "index_select", "scatter", "scatter_add", "sort", "topk", "split",
    "chunk", "unbind", "argmax", "max", "min", "mean", "std", "var", "cumsum", "flip", "roll",
    "gt", "ge", "lt", "le", "eq", "ne", "add", "sub", "mul", "div", "neg", "sqrt",  # (``input.gt(thresh)``)
})
# Tensor methods whose arguments at these positions are tensors (indices, sources, masks):
# ``out.scatter_(dim, index, src)``, ``x.gather(dim, index)``, ``x.masked_fill(mask, value)``.
_TENSOR_ARGUMENTS = {
    "scatter": (1, 2), "scatter_": (1, 2), "scatter_add": (1, 2), "scatter_add_": (1, 2),
    "scatter_reduce": (1, 2), "scatter_reduce_": (1, 2), "index_add": (1, 2), "index_add_": (1, 2),
    "index_copy": (1, 2), "index_copy_": (1, 2), "gather": (1,), "index_select": (1,),
    "take_along_dim": (0,), "masked_fill": (0,), "masked_fill_": (0,), "masked_scatter": (0, 1),
    "masked_scatter_": (0, 1), "masked_select": (0,),
}
# torch namespaces whose public functions compute tensors (not ``torch.cuda`` streams,
# ``torch.nn.modules.utils._pair`` tuples, ``torch.distributed`` handles).
TENSOR_APIS = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                         "torch.sparse", "torch.nested", "torch.autograd"})
_SAVING_CTX_METHODS = frozenset({"save_for_backward", "mark_dirty", "mark_non_differentiable", "save_for_forward"})


@dataclass(frozen=True)
class CtxStore:
    """``<ctx>.<attribute> = value`` in ``method`` (``forward`` or ``setup_context``)."""

    assign: cst.Assign
    attribute: str
    value: cst.BaseExpression
    method: cst.FunctionDef
    ctx: str
    position: Optional[int] = None  # in an unpacking: ``costs, ctx.grads = rnnt_loss(...)``


class AutogradFunctions:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls
        self._tensor_names: dict[cst.FunctionDef, set[str]] = {}

    def classes(self) -> list[cst.ClassDef]:
        return [cls for cls in self.tree.nodes(cst.ClassDef) if self.is_function_class(cls)]

    def is_function_class(self, cls: cst.ClassDef) -> bool:
        return any(base in FUNCTION_BASES for base in self.scopes.class_bases(cls))

    def method(self, cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
        body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
        return next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)

    def ctx_name(self, method: cst.FunctionDef) -> Optional[str]:
        params = method.params.params
        return params[0].name.value if params else None

    def ctx_stores(self, cls: cst.ClassDef) -> Iterator[CtxStore]:
        """Attribute stores on ``ctx`` in the methods that build it: ``setup_context`` when the
        class has one (its ``forward`` then takes no ctx), else ``forward``."""
        name = "setup_context" if self.method(cls, "setup_context") is not None else "forward"
        method = self.method(cls, name)
        ctx = self.ctx_name(method) if method is not None else None
        if method is None or ctx is None:
            return
        for assign in self.tree.descendants(method, cst.Assign):
            if self.scopes.function_of(assign) is not method:
                continue
            for target in assign.targets:
                attribute = target.target
                if isinstance(attribute, cst.Attribute) and dotted_name(attribute.value) == ctx:
                    yield CtxStore(assign, attribute.attr.value, assign.value, method, ctx)
                elif isinstance(attribute, (cst.Tuple, cst.List)):
                    value = assign.value
                    for position, element in enumerate(attribute.elements):
                        part = element.value
                        if isinstance(part, cst.Attribute) and dotted_name(part.value) == ctx:
                            given = value.elements[position].value if isinstance(value, (cst.Tuple, cst.List)) and \
                                len(value.elements) == len(attribute.elements) else value
                            yield CtxStore(assign, part.attr.value, given, method, ctx, position)

    def stores_tensor(self, store: CtxStore) -> bool:
        """What ``store`` keeps on ``ctx`` is a tensor: by its value, or, unpacked from one call
        beside a name the Function returns (``costs, ctx.grads = core.rnnt_loss(...)`` then
        ``return costs``), as another result of a call that makes the outputs."""
        if self.is_tensor(store.value, store.method):
            return True
        if store.position is None or store.value is not store.assign.value:
            return False
        outputs = self.output_names(store.method)
        return any(isinstance(e.value, cst.Name) and e.value.value in outputs
                   for t in store.assign.targets if isinstance(t.target, (cst.Tuple, cst.List)) for e in t.target.elements)

    def output_names(self, method: cst.FunctionDef) -> set[str]:
        """Names holding the Function's outputs (tensors by contract): what ``forward`` returns,
        alone, in a tuple, or indexed (``return outputs[0]``), and the ``output`` parameter of
        ``setup_context(ctx, inputs, output)``."""
        if method.name.value == "setup_context":
            params = [p.name.value for p in method.params.params]
            return {params[2]} if len(params) >= 3 else set()
        names: set[str] = set()
        for ret in self.scopes.scope_nodes(method, cst.Return):
            values = [ret.value] if ret.value else []
            while any(isinstance(v, cst.IfExp) for v in values):  # ``return (out, lse) if return_lse else out``
                values = [part for v in values for part in ((v.body, v.orelse) if isinstance(v, cst.IfExp) else (v,))]
            elements = [e for v in values for e in (v.elements if isinstance(v, (cst.Tuple, cst.List)) else [v])]
            for element in elements:
                node = element.value if isinstance(element, cst.BaseElement) else element
                if isinstance(node, cst.Subscript):
                    node = node.value
                if isinstance(node, cst.Name):
                    names.add(node.value)
        return names

    # -- tensors ------------------------------------------------------------------------
    def is_tensor(self, expr: Optional[cst.BaseExpression], method: cst.FunctionDef, depth: int = 0) -> bool:
        """Whether ``expr`` in ``method`` is a tensor (or a tuple/list holding one)."""
        if expr is None or depth > 8:
            return False
        depth += 1
        if isinstance(expr, cst.Name):
            return self._name_is_tensor(expr.value, method, depth)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in METADATA_ATTRIBUTES:
                return False
            return expr.attr.value in TENSOR_VALUED_ATTRIBUTES and self.is_tensor(expr.value, method, depth)
        if isinstance(expr, cst.Call):
            return self._call_is_tensor(expr, method, depth)
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, method, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_tensor(expr.left, method, depth) or self.is_tensor(expr.right, method, depth)
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and self.is_tensor(expr.expression, method, depth)
        if isinstance(expr, cst.Comparison):  # x > 0 is a bool tensor; ``x is None`` a bool
            return not any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in expr.comparisons) \
                and self.is_tensor(expr.left, method, depth)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return any(self.is_tensor(e.value, method, depth) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            return any(self.is_tensor(e.value, method, depth) for e in expr.elements if isinstance(e, cst.DictElement))
        if isinstance(expr, cst.IfExp):
            return self.is_tensor(expr.body, method, depth) or self.is_tensor(expr.orelse, method, depth)
        return False

    def _call_is_tensor(self, call: cst.Call, method: cst.FunctionDef, depth: int) -> bool:
        func = call.func
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return is_tensor_function(qualified)
        callee = self._helper(call)
        if callee is not None:  # a helper of this file: what it returns (alone, in a tuple or a dict)
            return any(self.is_tensor(r.value, callee.function, depth)
                       for r in self.scopes.scope_nodes(callee.function, cst.Return))
        if isinstance(func, cst.Attribute):
            if func.attr.value in NON_TENSOR_METHODS:
                return False
            if func.attr.value in TENSOR_METHODS:
                return True
            return self.is_tensor(func.value, method, depth)
        return False

    def _name_is_tensor(self, name: str, method: cst.FunctionDef, depth: int) -> bool:
        own = method.name.value in CTX_METHODS  # (else a helper they call)
        if name in self.used_as_tensor(method) or own and name in self.output_names(method):
            return True
        bindings = self.scopes.bindings(method).get(name, [])
        if not own and any(isinstance(b.node, cst.Param) for b in bindings):
            return self._given_tensor(method, name, depth)
        return any(self._bound_tensor(b.value, b.index, method, depth) for b in bindings if b.value is not None)

    def _bound_tensor(self, value: cst.BaseExpression, index: Optional[int], method: cst.FunctionDef,
                      depth: int) -> bool:
        """Whether a name bound to ``value`` (at position ``index`` of it: ``out, spec = f(x)``)
        holds a tensor; a helper's returned tuples are read at that position."""
        if index is not None and isinstance(value, cst.Name) and method.name.value == "setup_context" and \
                value.value in self.output_names(method):  # ``_, state = output``: what forward returns there
            return self._forward_returns_tensor_at(method, index, depth)
        callee = self._helper(value) if index is not None and isinstance(value, cst.Call) else None
        if callee is None:
            return self.is_tensor(value, method, depth)
        # (a return that spells no tuple out, ``return outputs``, is read whole)
        return any(self.is_tensor(returned_part(r.value, index) if isinstance(r.value, (cst.Tuple, cst.List))
                                  else r.value, callee.function, depth + 1)
                   for r in self.scopes.scope_nodes(callee.function, cst.Return))

    def _forward_returns_tensor_at(self, setup_context: cst.FunctionDef, index: int, depth: int) -> bool:
        """Whether the ``forward`` beside ``setup_context`` may return a tensor at tuple position
        ``index``: its outputs are tensors by contract, except a value made as no tensor
        (``return out, x.cpu().numpy()``)."""
        cls = self.scopes.class_of(setup_context)
        forward = self.method(cls, "forward") if cls is not None else None
        return forward is None or not all(
            isinstance(ret.value, (cst.Tuple, cst.List)) and
            self._made_as_no_tensor(returned_part(ret.value, index), forward, depth)
            for ret in self.scopes.scope_nodes(forward, cst.Return))

    def _made_as_no_tensor(self, expr: Optional[cst.BaseExpression], method: cst.FunctionDef, depth: int) -> bool:
        """Whether ``expr`` is known to be no tensor: a literal, tensor metadata, a tensor method
        that returns none (``.numpy()``, ``.tolist()``), a helper of this file that returns only
        such values, or a name bound only to them."""
        if expr is None or depth > 8:
            return False
        depth += 1
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
            return True
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in METADATA_ATTRIBUTES
        if isinstance(expr, cst.Name):
            bindings = self.scopes.bindings(method).get(expr.value, [])
            return bool(bindings) and all(b.value is not None and b.index is None and
                                          self._made_as_no_tensor(b.value, method, depth) for b in bindings)
        if isinstance(expr, cst.Call):
            callee = self._helper(expr)
            if callee is not None:
                returns = self.scopes.scope_nodes(callee.function, cst.Return)
                return bool(returns) and all(self._made_as_no_tensor(r.value, callee.function, depth) for r in returns)
            return isinstance(expr.func, cst.Attribute) and expr.func.attr.value in NON_TENSOR_METHODS
        return False

    def _given_tensor(self, helper: cst.FunctionDef, param: str, depth: int) -> bool:
        """A helper's parameter is a tensor where a call of this file passes it one."""
        for call in self.calls.call_sites(helper):
            callee = self._helper(call)
            for argument, at in self.calls.arguments(call, callee).get(param, []) if callee else ():
                caller = self.scopes.function_of(at)
                if isinstance(caller, cst.FunctionDef) and self.is_tensor(argument, caller, depth):
                    return True
        return False

    def _helper(self, call: cst.Call) -> Optional[Callee]:
        callee = self.calls.callee(call)
        return callee if callee is not None and isinstance(callee.function, cst.FunctionDef) else None

    def used_as_tensor(self, method: cst.FunctionDef) -> set[str]:
        """Names ``method`` uses as tensors: annotated ``Tensor``, receivers of tensor methods or
        attributes, saved with ``ctx.save_for_backward``, first argument of a torch function,
        operands of ``@``."""
        cached = self._tensor_names.get(method)
        if cached is not None:
            return cached
        names: set[str] = set()
        self._tensor_names[method] = names  # (filled below; a helper calling back sees it so far)
        params = method.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            annotation = param.annotation
            if annotation is not None and (dotted_name(annotation.annotation) or "").split(".")[-1] == "Tensor":
                names.add(param.name.value)
        by_device: set[str] = set()  # read as ``x.device`` / ``x.dtype``: a module or an env has those too
        foreign: set[str] = set()  # with another attribute no tensor has (``env.batch_size``, ``env._step``)
        for attribute in self.scopes.scope_nodes(method, cst.Attribute):
            receiver = attribute.value
            if not isinstance(receiver, cst.Name):
                continue
            parent = self.tree.parent.get(attribute)
            called = isinstance(parent, cst.Call) and parent.func is attribute
            member = attribute.attr.value
            if member in _SHARED_METADATA:
                by_device.add(receiver.value)
            elif member in METADATA_ATTRIBUTES or member in TENSOR_VALUED_ATTRIBUTES or \
                    (called and member in _USED_AS_TENSOR_METHODS):
                names.add(receiver.value)
            elif member not in _USED_AS_TENSOR_METHODS:
                foreign.add(receiver.value)
        names |= by_device - foreign
        ctx = self.ctx_name(method)
        for call in self.scopes.scope_nodes(method, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in _SAVING_CTX_METHODS and \
                    dotted_name(func.value) == ctx:
                names.update(a.value.value for a in call.args if isinstance(a.value, cst.Name))
            elif isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_ARGUMENTS and \
                    self.imports.qualify(func) is None:  # a tensor's method, not ``dist.scatter(...)``
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                names.update(positional[i].value for i in _TENSOR_ARGUMENTS[func.attr.value]
                             if i < len(positional) and isinstance(positional[i], cst.Name))
            elif call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].keyword is None and \
                    is_tensor_function(qualified := self.imports.qualify(func) or "") and \
                    qualified.split(".")[-1] not in SHAPE_FACTORIES:
                names.add(call.args[0].value.value)
            elif (callee := self._helper(call)) is not None and callee.function is not method:
                # a name handed to a helper of this file that uses that parameter as a tensor
                used = self.used_as_tensor(callee.function)
                names.update(argument.value for param, given in self.calls.arguments(call, callee).items()
                             if param in used for argument, _ in given if isinstance(argument, cst.Name))
        for operation in self.scopes.scope_nodes(method, cst.BinaryOperation):
            if isinstance(operation.operator, cst.MatrixMultiply):
                names.update(n.value for n in (operation.left, operation.right) if isinstance(n, cst.Name))
        names.discard(ctx or "")
        return names


def is_tensor_function(qualified: str) -> bool:
    """A public torch function that returns tensors: ``torch.mm``, ``F.relu``, ``torch.linalg.qr``."""
    namespace, _, name = qualified.rpartition(".")
    return namespace in TENSOR_APIS and not name.startswith("_") and not torch_gives_no_tensor(name)
