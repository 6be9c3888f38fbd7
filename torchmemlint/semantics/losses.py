"""Loss values: 0-dim losses such as ``loss``, ``criterion(out, y)``, ``outputs.loss``,
``loss.detach()``, ``logits.mean()``, and a loss broadcast over the batch for gathering
(``accelerator.gather_for_metrics(loss.repeat(batch_size))``, transformers' examples).

Kept on the device, each costs one allocator block (512 bytes on CUDA), and keeping it there on
purpose instead of calling ``.item()`` spares a host synchronisation every step (the PyTorch
performance guide's advice). The device growth TML004 is about — every batch's outputs of an
evaluation set kept on the GPU — comes from model outputs, not from these."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Scopes, terminal_name
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.values import Values

# Methods that keep a loss a loss: elementwise maths, dtype/device moves, and broadcasting one
# value over the batch (``loss.repeat(batch_size)`` holds batch_size copies of one number).
_LOSS_KEEPING_METHODS = frozenset({
    "detach", "float", "double", "half", "bfloat16", "clone", "contiguous", "to", "cuda", "abs",
    "neg", "sqrt", "exp", "log", "mul", "div", "add", "sub", "pow", "clamp", "repeat", "expand",
    "unsqueeze", "view", "reshape", "flatten",
})
# Collective helpers (accelerate, torch.distributed wrappers) that gather a value from every process.
_GATHERING_METHODS = frozenset({"gather", "gather_for_metrics", "all_gather", "reduce"})
# Reductions that return a 0-dim tensor when called without a dimension.
_FULL_REDUCTIONS = frozenset({"mean", "sum", "norm", "max", "min", "std", "var", "prod", "amax", "amin"})
_MAX_DEPTH = 8


class LossValues:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, values: Values) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.values = values

    def is_loss_value(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None, _depth: int = 0) -> bool:
        """Whether ``expr`` (used at ``at``) is a loss value (see the module docstring)."""
        at = at if at is not None else expr
        _depth += 1
        if _depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Name):
            # A parameter, loop variable or element unpacked from a call (``loss, acc = f()``)
            # is judged by its name; a plain assignment by its value.
            named_loss = "loss" in expr.value.lower().split("_")
            bindings = self.scopes.reaching_bindings(expr.value, at)
            return bool(bindings or named_loss) and all(
                named_loss if b.value is None or b.index is not None else self.is_loss_value(b.value, b.node, _depth)
                for b in bindings
            )
        if isinstance(expr, cst.Attribute):
            return expr.attr.value == "loss"  # ``outputs.loss`` of a transformers model
        if isinstance(expr, cst.Subscript):
            key = expr.slice[0].slice if len(expr.slice) == 1 else None
            return isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString) and \
                "loss" in str(key.value.evaluated_value).lower()
        if isinstance(expr, cst.BinaryOperation):
            left, right = expr.left, expr.right
            return (self.is_loss_value(left, at, _depth) and self._scalar_or_number(right, at, _depth)) or \
                (self.is_loss_value(right, at, _depth) and self._scalar_or_number(left, at, _depth))
        if isinstance(expr, cst.UnaryOperation):
            return self.is_loss_value(expr.expression, at, _depth)
        if isinstance(expr, cst.Call):
            return self._call_is_scalar(expr, at, _depth)
        return False

    def _scalar_or_number(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float)):
            return True
        return self.is_loss_value(expr, at, depth) or not self.values.is_device_tensor(expr, at)

    def _call_is_scalar(self, call: cst.Call, at: cst.CSTNode, depth: int) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and self.imports.qualify(func) is None:
            method = func.attr.value
            if method in _FULL_REDUCTIONS:
                return not call.args  # ``x.mean()``, not ``x.mean(dim=1)``
            if method in _LOSS_KEEPING_METHODS:
                return self.is_loss_value(func.value, at, depth)
            if method in _GATHERING_METHODS:
                return len(call.args) == 1 and self.is_loss_value(call.args[0].value, at, depth)
        return self._is_loss_call(call)

    def _is_loss_call(self, call: cst.Call) -> bool:
        """``criterion(out, y)``, ``F.cross_entropy(out, y)``, ``nn.MSELoss()(out, y)`` with the
        default (mean) reduction."""
        if any(a.keyword is not None and a.keyword.value == "reduction" for a in call.args):
            return _reduces(call)
        func = call.func
        if isinstance(func, cst.Call):  # nn.MSELoss(...)(out, y)
            return self._is_loss_call_name(func.func) and _reduces(func)
        if not self._is_loss_call_name(func):
            return False
        if isinstance(func, cst.Name):  # criterion bound to nn.CrossEntropyLoss(reduction="none")?
            for binding in self.scopes.reaching_bindings(func.value, call):
                if isinstance(binding.value, cst.Call) and not _reduces(binding.value):
                    return False
        return True

    def _is_loss_call_name(self, func: cst.BaseExpression) -> bool:
        qualified = self.imports.qualify(func)
        name = (qualified or dotted_name(func) or "").split(".")[-1]
        if qualified is not None and qualified.startswith("torch.nn.functional."):
            return self.values.is_module_call(cst.Call(func=func))
        lowered = (terminal_name(func) or name).lower()
        return "loss" in lowered or "criterion" in lowered


def _reduces(call: cst.Call) -> bool:
    """No ``reduction="none"`` argument."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "reduction":
            return not (isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "none")
    return True
