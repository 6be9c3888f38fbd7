"""Which expressions are tensors, and which functions return or take them.

Two strengths of the same question: ``may_be_tensor`` (a rule reports when a function may return
a tensor) and ``kind`` (a fix rewrites only what is surely a tensor, or surely a tuple of
tensors: ``h.detach()`` on a tuple would raise)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Scopes
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.values import Values

TENSOR = "tensor"
TUPLE_OF_TENSORS = "tuple"

# ``torch.<x>`` names whose result is no tensor (namespaces, metadata, settings, modules).
_NON_TENSOR_TORCH = frozenset({
    "cuda", "backends", "distributed", "jit", "utils", "hub", "onnx", "package", "profiler", "testing",
    "version", "compile", "device", "dtype", "finfo", "iinfo", "Size", "Generator", "get_default_dtype",
    "is_tensor", "is_floating_point", "is_complex", "is_grad_enabled", "manual_seed", "seed",
    "set_default_dtype", "set_grad_enabled", "no_grad", "enable_grad", "inference_mode", "load", "save",
    "nn", "optim", "autograd", "distributions", "multiprocessing", "amp", "fx", "export", "library",
    "get_num_threads", "set_num_threads", "numel", "typename", "use_deterministic_algorithms",
    "set_printoptions", "cpu", "mps", "xpu", "npu", "accelerator", "overrides", "random", "futures",
})
_METADATA_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "names", "is_leaf", "grad_fn",
})
# ``torch`` namespaces whose functions compute tensors ("" is ``torch`` itself).
_TENSOR_NAMESPACES = frozenset({"", "nn.functional", "linalg", "fft", "special", "sparse", "nested"})
# Functions that surely produce one tensor (factories and joins), for fixes.
SURE_TENSOR_FUNCTIONS = frozenset({
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "randint_like", "from_numpy", "randperm", "cat", "concat", "concatenate", "stack",
    "vstack", "hstack", "dstack", "Tensor", "FloatTensor", "LongTensor",
})
SURE_TENSOR_METHODS = frozenset({
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "to", "cuda", "cpu", "float",
    "half", "double", "bfloat16", "clone", "detach", "contiguous", "requires_grad_", "fill_", "zero_",
    "view", "reshape", "expand", "repeat", "unsqueeze", "squeeze", "permute", "transpose", "t",
})


class Tensors:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, values: Values) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.values = values
        self._kind_of_function: dict[cst.FunctionDef, Optional[str]] = {}
        self._returns_tensor: dict[cst.FunctionDef, bool] = {}

    # -- may be a tensor (for reporting) ----------------------------------------------
    def is_torch_tensor_function(self, call: cst.Call) -> bool:
        """``torch.<op>(...)`` (or an op of ``torch.nn.functional``, ``torch.linalg``, ``torch.fft``,
        ``torch.special``) that computes a tensor — not ``torch.device``, ``torch.cuda.*``,
        ``torch.backends.*``, ``torch.npu.is_available()`` ..."""
        qualified = self.imports.qualify(call.func)
        if qualified is None or not qualified.startswith("torch."):
            return False
        namespace, _, function = qualified[len("torch."):].rpartition(".")
        if namespace not in _TENSOR_NAMESPACES or function.startswith(("is_", "has_", "get_", "set_")):
            return False
        return function not in _NON_TENSOR_TORCH

    def may_be_tensor(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
        if depth > 8:
            return False
        depth += 1
        if isinstance(expr, cst.Call):
            if self.is_torch_tensor_function(expr) or self.values.is_module_call(expr):
                return True
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in SURE_TENSOR_METHODS:
                return self.may_be_tensor(func.value, at, depth)
            target = self._local_function(func)
            return target is not None and self.returns_tensor(target)
        if isinstance(expr, cst.Name):
            return any(
                b.value is not None and self.may_be_tensor(b.value, b.node, depth)
                for b in self.scopes.reaching_bindings(expr.value, at)
            )
        if isinstance(expr, cst.BinaryOperation):
            return self.may_be_tensor(expr.left, at, depth) or self.may_be_tensor(expr.right, at, depth)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return any(self.may_be_tensor(e.value, at, depth) for e in expr.elements)
        if isinstance(expr, cst.Subscript):
            return self.may_be_tensor(expr.value, at, depth)
        if isinstance(expr, cst.Attribute):  # ``outputs.logits``, but not ``x.shape``
            return expr.attr.value not in _METADATA_ATTRIBUTES and self.may_be_tensor(expr.value, at, depth)
        return False

    def returns_tensor(self, func: cst.FunctionDef) -> bool:
        """Annotated ``-> torch.Tensor`` (or a container of tensors), or some ``return`` gives
        a tensor."""
        cached = self._returns_tensor.get(func)
        if cached is not None:
            return cached
        self._returns_tensor[func] = False  # recursion guard
        result = (func.returns is not None and self.annotation_has_tensor(func.returns.annotation)) or any(
            ret.value is not None and self.may_be_tensor(ret.value, ret)
            for ret in self.scopes.scope_nodes(func, cst.Return)
        )
        self._returns_tensor[func] = result
        return result

    def takes_tensor(self, func: cst.FunctionDef) -> bool:
        """A parameter annotated as a tensor."""
        params = func.params
        return any(
            p.annotation is not None and self.annotation_has_tensor(p.annotation.annotation)
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        )

    def annotation_has_tensor(self, annotation: cst.BaseExpression) -> bool:
        for node in self.tree.descendants(annotation, cst.Name):
            parent = self.tree.parent.get(node)
            expr = parent if isinstance(parent, cst.Attribute) and parent.attr is node else node
            qualified = self.imports.qualify(expr) or dotted_name(expr) or ""
            if qualified in ("torch.Tensor", "Tensor", "torch.FloatTensor", "torch.LongTensor"):
                return True
        for string in self.tree.descendants(annotation, cst.SimpleString):  # "torch.Tensor"
            if "Tensor" in string.value:
                return True
        return False

    # -- surely a tensor / a tuple of tensors (for fixes) ------------------------------
    def kind(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> Optional[str]:
        """TENSOR or TUPLE_OF_TENSORS when ``expr`` surely is one, else None."""
        if depth > 8:
            return None
        depth += 1
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, at, depth)
        if isinstance(expr, cst.Name):
            bindings = self.scopes.reaching_bindings(expr.value, at)
            kinds = {self.kind(b.value, b.node, depth) if b.value is not None else None for b in bindings}
            return kinds.pop() if len(kinds) == 1 else None
        if isinstance(expr, cst.Tuple) and expr.elements:
            if all(self.kind(e.value, at, depth) == TENSOR for e in expr.elements):
                return TUPLE_OF_TENSORS
            return None
        if isinstance(expr, cst.BinaryOperation):
            if TENSOR in (self.kind(expr.left, at, depth), self.kind(expr.right, at, depth)):
                return TENSOR
        return None

    def _call_kind(self, call: cst.Call, at: cst.CSTNode, depth: int) -> Optional[str]:
        qualified = self.imports.qualify(call.func)
        if qualified is not None:
            return TENSOR if qualified.startswith("torch.") and qualified.split(".")[-1] in SURE_TENSOR_FUNCTIONS \
                else None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in SURE_TENSOR_METHODS:
            if func.attr.value.startswith("new_") or self.kind(func.value, at, depth) == TENSOR:
                return TENSOR
            return None
        target = self._local_function(func)
        if target is None:
            return None
        if target in self._kind_of_function:
            return self._kind_of_function[target]
        self._kind_of_function[target] = None  # recursion guard
        returns = [r for r in self.scopes.scope_nodes(target, cst.Return) if r.value is not None]
        kinds = {self.kind(r.value, r, depth) for r in returns}
        result = kinds.pop() if len(kinds) == 1 else None
        self._kind_of_function[target] = result
        return result

    def _local_function(self, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """The function of this file a call runs: ``f(...)`` or ``self.f(...)`` /
        ``model.f(...)`` when exactly one function has that name."""
        if isinstance(func, cst.Name):
            name = func.value
        elif isinstance(func, cst.Attribute):
            name = func.attr.value
        else:
            return None
        candidates = self.scopes.functions_by_name.get(name, [])
        return candidates[0] if len(candidates) == 1 else None
