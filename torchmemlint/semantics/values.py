"""What a value is: graph-attached (may hold an autograd graph) and/or a device tensor.

RULES.md, "what keeps the graph and what breaks it": ``.cpu()``, ``.to()``, ``.clone()``,
``.float()``, views, indexing, ``torch.stack/cat`` and arithmetic keep the graph; only
``.detach()``, ``.item()``, ``.tolist()``, ``float()``, ``int()`` and values computed under a
grad-disabled context break it."""
from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from torchmemlint.semantics.grad import GradContexts
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.modules import Modules
from torchmemlint.semantics.scopes import Scopes, terminal_name
from torchmemlint.semantics.tree import Tree

# Methods that return a hook handle, not a tensor.
HOOK_REGISTRATIONS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_hook",
    "register_post_accumulate_grad_hook",
})
# Methods whose result holds no graph: Python values, integer/bool tensors, detached copies.
GRAPH_BREAKING_METHODS = frozenset({
    "item", "tolist", "numpy", "detach", "detach_", "size", "dim", "numel", "argmax", "argmin",
    "argsort", "eq", "ne", "lt", "le", "gt", "ge", "nonzero", "isnan", "isinf", "isfinite", "all",
    "any", "long", "int", "bool", "byte", "char", "short", "data_ptr", "element_size", "nelement",
    "stride", "storage_offset", "is_contiguous", "get_device", "keys", "items", "__len__",
    "state_dict", "parameters", "named_parameters", "zero_grad", "train", "eval", "count",
}) | HOOK_REGISTRATIONS
# Attributes that are not the tensor's data (metadata or the detached ``.data``/``.grad``).
NON_GRAPH_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "requires_grad", "grad", "data", "is_cuda", "ndim", "grad_fn",
    "is_leaf", "layout", "T_", "names", "training",
})
BREAKING_BUILTINS = frozenset({
    "float", "int", "bool", "len", "str", "repr", "round", "abs_", "isinstance", "print", "range",
    "enumerate", "format", "hash", "id", "type",
})
_FACTORIES = frozenset({
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
    "linspace", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "eye", "from_numpy", "randperm", "logspace", "tensor_split",
})
# Callee names that are models or loss functions: calling one runs a forward pass.
# Callee names that are models or loss functions: calling one runs a forward pass. The last
# word of the name decides (``policy_net``, ``ddp_model``), or the first one followed only by a
# role suffix (``model_ema``, ``encoder_q``); ``policy_fn`` or ``model_path`` are not models.
MODEL_WORDS = frozenset({
    "model", "models", "net", "network", "encoder", "decoder", "backbone", "classifier",
    "generator", "discriminator", "critic", "actor", "policy", "criterion", "criterium", "lossfn",
    "teacher", "student", "unet", "vae", "lstm", "rnn", "gru", "mlp", "cnn", "autoencoder",
    "transformer", "qnet", "module", "loss",
})
# First words of names that handle models rather than run them.
_MODEL_HANDLING_VERBS = frozenset({
    "load", "save", "build", "make", "create", "init", "setup", "prepare", "freeze", "unfreeze", "reset",
    "wrap", "copy", "clone", "register", "export", "print", "log", "summarize", "count",
})
_LOSS_FUNCTION_NAMES = frozenset({"loss_fn", "loss_func", "loss_function", "loss_fct", "lossfn", "loss_module"})
_ROLE_SUFFIXES = frozenset({"ema", "old", "new", "target", "ddp", "q", "k", "g", "d", "a", "b", "s", "t", "fp16",
                            "engine", "without_ddp", "wrapped", "eval", "train"})
EXACT_MODEL_NAMES = frozenset({"G", "D", "netG", "netD", "netE", "Q", "pi", "ddp_model", "vf"})
# Methods of a model that run (part of) its forward pass.
FORWARD_METHODS = frozenset({"encode", "decode", "compute_loss", "get_loss", "forward_train"})
# Methods of a model that return no tensor on its device.
_MODEL_NON_TENSOR_METHODS = frozenset({
    "state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "children",
    "named_children", "modules", "named_modules", "train", "eval", "zero_grad", "apply", "cpu",
    "requires_grad_", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_buffer", "load_state_dict", "num_parameters", "get_input_embeddings", "save_pretrained",
    "extra_repr", "type", "share_memory",
})
LOSS_SUFFIX = re.compile(r"(?:loss|Loss|criterion)$")
_DEVICE_NAME = re.compile(r"device|dev\b|gpu|cuda|rank", re.IGNORECASE)
MAX_DEPTH = 12


class Values:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, grad: GradContexts, modules: Modules) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.grad = grad
        self.modules = modules
        self._backwarded: dict[object, set[str]] = {}
        self._feeding_backward: dict[object, set[str]] = {}
        self._returns_attached: dict[cst.FunctionDef, bool] = {}

    # -- forward passes ---------------------------------------------------------------
    def is_module_call(self, call: cst.Call) -> bool:
        """A call that runs a model or a loss function (a forward pass)."""
        func = call.func
        qualified = self.imports.qualify(func)
        if qualified is not None:
            if qualified.startswith("torch.nn.functional."):
                return bool(LOSS_SUFFIX.search(qualified)) or qualified.endswith(
                    ("cross_entropy", "nll_loss", "kl_div", "binary_cross_entropy_with_logits")
                )
            return False
        if isinstance(func, cst.Call):  # nn.CrossEntropyLoss()(out, y)
            inner = self.imports.qualify(func.func) or ""
            return inner.startswith("torch.nn.") and inner.split(".")[-1][:1].isupper()
        if isinstance(func, cst.Name) and func.value == "self":
            return True  # ``self(x)`` in a module calls its forward
        if isinstance(func, cst.Attribute):
            if func.attr.value == "forward":
                return True
            if func.attr.value in FORWARD_METHODS:
                receiver = func.value
                return is_model_name(terminal_name(receiver)) or (
                    isinstance(receiver, cst.Name) and receiver.value == "self"
                    and self._in_module_class(call)
                )
        if self.modules.submodule_attribute(func):  # self.fc1(x) where __init__ made fc1 a module
            return True
        name = terminal_name(func)
        if name is None or _is_class_name(name):
            return False  # ``Net()`` builds a model, it does not run one
        if isinstance(func, cst.Name) and name in self.scopes.functions_by_name:
            return False  # ``test_model(net, loader)``: a helper of this file, read through its body
        return is_model_name(name) or self._bound_to_module(func)

    def _in_module_class(self, node: cst.CSTNode) -> bool:
        func = self.scopes.function_of(node)
        return func is not None and self.scopes.is_torch_module_class(self.scopes.class_of(func))

    def _bound_to_module(self, func: cst.BaseExpression) -> bool:
        """A name bound in this scope to ``nn.Something(...)`` or a Module class of this file."""
        if not isinstance(func, cst.Name):
            return False
        for binding in self.scopes.reaching_bindings(func.value, func):
            if isinstance(binding.node, cst.For):
                target = self.modules.submodule_loop_target(binding.node)
                if isinstance(target, cst.Name) and target.value == func.value:
                    return True  # ``for block in self.blocks: x = block(x)``
            value = binding.value
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in ("to", "cuda"):
                value = value.func.value
            if isinstance(value, cst.Call):
                qualified = self.imports.qualify(value.func) or ""
                if qualified.startswith("torch.nn.") and qualified.split(".")[-1][:1].isupper():
                    return True
                cls = self.scopes.classes_by_name.get(dotted_name(value.func) or "")
                if self.scopes.is_torch_module_class(cls):
                    return True
        return False

    # -- graph-attached ---------------------------------------------------------------
    def is_attached(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None, _depth: int = 0) -> bool:
        """Whether ``expr`` (evaluated where ``at`` is, default: where it stands) may hold an
        autograd graph."""
        at = at if at is not None else expr
        if _depth > MAX_DEPTH or self.grad.is_disabled(at):
            return False
        return self._attached(expr, at, _depth)

    def _attached(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        depth += 1
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, cst.Name):
            return self._name_attached(expr.value, at, depth)
        if isinstance(expr, cst.Call):
            return self._call_attached(expr, at, depth)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in NON_GRAPH_ATTRIBUTES:
                return False
            return self._attached(expr.value, at, depth)
        if isinstance(expr, cst.Subscript):
            return self._attached(expr.value, at, depth)
        if isinstance(expr, cst.BinaryOperation):
            return self._attached(expr.left, at, depth) or self._attached(expr.right, at, depth)
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and self._attached(expr.expression, at, depth)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return any(self._attached(e.value, at, depth) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            return any(isinstance(e, cst.DictElement) and self._attached(e.value, at, depth) for e in expr.elements)
        if isinstance(expr, cst.IfExp):
            return self._attached(expr.body, at, depth) or self._attached(expr.orelse, at, depth)
        if isinstance(expr, cst.NamedExpr):
            return self._attached(expr.value, at, depth)
        return False

    def _name_attached(self, name: str, at: cst.CSTNode, depth: int) -> bool:
        bindings = self.scopes.reaching_bindings(name, at)
        for binding in bindings:
            if binding.value is not None and not self.grad.is_disabled(binding.node):
                if binding.index is not None and isinstance(binding.value, cst.Call):
                    if self._call_element_attached(binding.value, binding.index, binding.node, depth):
                        return True
                elif self._attached(binding.value, binding.node, depth):
                    return True
        # A name some backward pass differentiates holds a graph, when what reaches here is
        # opaque (a parameter, a call of something unknown) rather than known to be detached.
        return name in self.backwarded_names(self.scopes.scope_of(at)) and all(
            b.value is None or (isinstance(b.value, cst.Call) and not _plainly_detached(b.value)
                                and not self.grad.is_disabled(b.node))
            for b in bindings
        )

    def _call_element_attached(self, call: cst.Call, index: int, at: cst.CSTNode, depth: int) -> bool:
        """Element ``index`` of what ``call`` returns (``loss, n_correct = f(...)``): looked up in
        the returned tuples of a function of this file, else the whole result decides."""
        target = self._local_callee(call.func)
        if target is None:
            return self._attached(call, at, depth)
        for ret in self.scopes.scope_nodes(target, cst.Return):
            value = ret.value
            if isinstance(value, cst.Tuple) and index < len(value.elements):
                if self.is_attached(value.elements[index].value, ret, depth):
                    return True
            elif value is not None and self.is_attached(value, ret, depth):
                return True
        return False

    def _call_attached(self, call: cst.Call, at: cst.CSTNode, depth: int) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in GRAPH_BREAKING_METHODS:
                return False
            if self.is_module_call(call):
                return True
            qualified = self.imports.qualify(func)
            if qualified is not None:
                return self._torch_function_attached(qualified, call, at, depth)
            if method in ("get", "pop", "values", "copy"):  # dict access on a dict of losses
                return self._attached(func.value, at, depth)
            if self._callee_returns_attached(func):
                return True
            return self._attached(func.value, at, depth)  # a tensor method keeps the graph
        if isinstance(func, cst.Name):
            if func.value in BREAKING_BUILTINS:
                return False
            if func.value in ("sum", "max", "min", "tuple", "list", "sorted", "reversed"):
                return any(self._attached(a.value, at, depth) for a in call.args)
        if self.is_module_call(call):
            return True
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return self._torch_function_attached(qualified, call, at, depth)
        return self._callee_returns_attached(func)

    def _torch_function_attached(self, qualified: str, call: cst.Call, at: cst.CSTNode, depth: int) -> bool:
        if not qualified.startswith("torch."):
            return False
        if qualified.split(".")[-1] in _FACTORIES or qualified.startswith(("torch.cuda.", "torch.utils.")):
            return False
        if qualified == "torch.autograd.grad":  # gradients hold a graph only with create_graph=True
            return any(a.keyword is not None and a.keyword.value == "create_graph" and
                       not (isinstance(a.value, cst.Name) and a.value.value == "False") for a in call.args)
        return any(self._attached(a.value, at, depth) for a in call.args)

    def _local_callee(self, func: cst.BaseExpression) -> Optional[cst.FunctionDef]:
        """The function of this file a call runs: ``f(...)`` or ``self.f(...)``, if unambiguous."""
        if isinstance(func, cst.Name):
            candidates = self.scopes.functions_by_name.get(func.value, [])
        elif isinstance(func, cst.Attribute) and dotted_name(func.value) == "self":
            candidates = self.scopes.functions_by_name.get(func.attr.value, [])
        else:
            return None
        return candidates[0] if len(candidates) == 1 else None

    def _callee_returns_attached(self, func: cst.BaseExpression) -> bool:
        """A function or ``self`` method of this file whose return value is graph-attached."""
        target = self._local_callee(func)
        if target is None:
            return False
        cached = self._returns_attached.get(target)
        if cached is not None:
            return cached
        self._returns_attached[target] = False  # recursion guard
        result = any(
            ret.value is not None and self.is_attached(ret.value, ret)
            for ret in self.scopes.scope_nodes(target, cst.Return)
        )
        self._returns_attached[target] = result
        return result

    def backwarded_names(self, scope) -> set[str]:
        """Names some backward pass in ``scope`` differentiates (so they hold a graph there):
        ``loss.backward()``, ``(loss / n).backward()``, ``scaler.scale(loss).backward()``,
        ``accelerator.backward(loss)``, ``torch.autograd.grad(loss, ...)``."""
        cached = self._backwarded.get(scope)
        if cached is not None:
            return cached
        names: set[str] = set()
        for call in self.scopes.scope_nodes(scope, cst.Call):
            for root in self.backward_roots(call):
                names.update(n.value for n in self.tree.descendants(root, cst.Name))
        names.discard("self")
        self._backwarded[scope] = names
        return names

    def names_feeding_backward(self, scope) -> set[str]:
        """Names whose values flow into a backward pass of ``scope`` (through assignments):
        ``log_probs`` in ``loss = -torch.stack(log_probs).sum(); loss.backward()``. Keeping
        such values is how gradient accumulation and REINFORCE work, not a leak."""
        cached = self._feeding_backward.get(scope)
        if cached is not None:
            return cached
        bindings = self.scopes.bindings(scope)
        feeding = set(self.backwarded_names(scope))
        pending = list(feeding)
        while pending:
            for binding in bindings.get(pending.pop(), []):
                if binding.value is None:
                    continue
                for name in self.tree.descendants(binding.value, cst.Name):
                    if name.value not in feeding and name.value in bindings:
                        feeding.add(name.value)
                        pending.append(name.value)
        self._feeding_backward[scope] = feeding
        return feeding

    def backward_roots(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The expressions a backward call differentiates, or [] if it is no backward call."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "backward":
            receiver = func.value
            if call.args and not isinstance(receiver, cst.Call):  # accelerator.backward(loss)
                return [call.args[0].value] if call.args[0].keyword is None else [receiver]
            if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and \
                    receiver.func.attr.value == "scale" and receiver.args:  # scaler.scale(loss)
                return [receiver.args[0].value]
            return [receiver]
        if isinstance(func, cst.Attribute) and func.attr.value == "manual_backward" and call.args:
            return [call.args[0].value]
        qualified = self.imports.qualify(func)
        if qualified in ("torch.autograd.grad", "torch.autograd.backward") and call.args:
            return [call.args[0].value]
        return []

    # -- device tensors ---------------------------------------------------------------
    def is_device_tensor(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None, _depth: int = 0) -> bool:
        """Whether ``expr`` may be a tensor on an accelerator (RULES.md, "device tensor")."""
        at = at if at is not None else expr
        _depth += 1
        if _depth > MAX_DEPTH:
            return False
        if isinstance(expr, cst.Name):
            if self._lightning_batch(expr.value, at):
                return True
            return any(
                b.value is not None and self.is_device_tensor(b.value, b.node, _depth)
                for b in self.scopes.reaching_bindings(expr.value, at)
            )
        if isinstance(expr, cst.Call):
            return self._call_on_device(expr, at, _depth)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value not in NON_GRAPH_ATTRIBUTES and self.is_device_tensor(expr.value, at, _depth)
        if isinstance(expr, cst.Subscript):
            return self.is_device_tensor(expr.value, at, _depth)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_device_tensor(expr.left, at, _depth) or self.is_device_tensor(expr.right, at, _depth)
        if isinstance(expr, cst.UnaryOperation):
            return self.is_device_tensor(expr.expression, at, _depth)
        if isinstance(expr, (cst.Tuple, cst.List)):
            return any(self.is_device_tensor(e.value, at, _depth) for e in expr.elements)
        return False

    def _call_on_device(self, call: cst.Call, at: cst.CSTNode, depth: int) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in ("cpu", "item", "tolist", "numpy", "size", "dim", "numel", "keys", "items") or \
                    method in HOOK_REGISTRATIONS:
                return False
            if method == "cuda":
                return True
            if method == "to":
                destination = self._to_destination(call)
                if destination is not None:
                    return destination
                return self.is_device_tensor(func.value, at, depth)
            if method in ("gather", "gather_for_metrics", "all_gather", "reduce"):
                return True
        if self.is_module_call(call):
            return True
        qualified = self.imports.qualify(func)
        if qualified is not None:
            if qualified.startswith("torch."):
                device = next((a.value for a in call.args if a.keyword and a.keyword.value == "device"), None)
                if device is not None:
                    return not _is_cpu(device)
                return any(self.is_device_tensor(a.value, at, depth) for a in call.args)
            return False
        if isinstance(func, cst.Name) and func.value in BREAKING_BUILTINS:
            return False
        if isinstance(func, cst.Attribute):
            receiver = terminal_name(func.value)
            if func.attr.value not in _MODEL_NON_TENSOR_METHODS and is_model_name(receiver) and \
                    not LOSS_SUFFIX.search(receiver or ""):  # a model, not a loss value like ``loss``
                return True  # ``model.linear_probe(code)``, ``model.generate(...)``: on the model's device
            return self.is_device_tensor(func.value, at, depth)
        return False

    def _to_destination(self, call: cst.Call) -> Optional[bool]:
        """For ``x.to(...)``: True if it moves to an accelerator, False if to the CPU, None if
        it only changes the dtype (the device stays)."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value != "device":
                continue
            value = arg.value
            if _is_cpu(value):
                return False
            if isinstance(value, cst.SimpleString):
                return True
            qualified = self.imports.qualify(value) or ""
            if qualified.startswith("torch.") and qualified != "torch.device":
                continue  # a dtype such as torch.float16
            if isinstance(value, cst.Call) and (self.imports.qualify(value.func) == "torch.device"):
                return not (value.args and _is_cpu(value.args[0].value))
            text = dotted_name(value) or ""
            if _DEVICE_NAME.search(text):
                return True
            if arg.keyword is not None:
                return True
        return None

    def _lightning_batch(self, name: str, at: cst.CSTNode) -> bool:
        """Lightning moves ``batch`` to the module's device before calling a step method."""
        func = self.scopes.function_of(at)
        if func is None or not self.scopes.is_per_step_method(func):
            return False
        if not self.scopes.is_lightning_module(self.scopes.class_of(func)):
            return False
        params = func.params.params
        if len(params) < 2 or params[1].name.value != name:
            # also names unpacked from it: ``x, y = batch``
            return any(
                isinstance(b.value, cst.Name) and b.value.value == "batch" and isinstance(b.node, cst.Assign)
                for b in self.scopes.reaching_bindings(name, at)
            )
        return True


def _is_class_name(name: str) -> bool:
    """CamelCase names are classes (``Net``, ``QNetwork``); single letters like ``G`` are not."""
    return name[:1].isupper() and any(c.islower() for c in name) and name not in EXACT_MODEL_NAMES


def is_model_name(name: Optional[str]) -> bool:
    """Whether an identifier names a model or a loss function (see MODEL_WORDS); not one that
    does something to models (``load_models``, ``build_model``, ``save_model``)."""
    if not name:
        return False
    if name in EXACT_MODEL_NAMES or name.lower() in _LOSS_FUNCTION_NAMES:
        return True
    words = name.lower().strip("_").split("_")
    if len(words) > 1 and words[0] in _MODEL_HANDLING_VERBS:
        return False
    if words[-1].rstrip("0123456789") in MODEL_WORDS:
        return True
    return words[0].rstrip("0123456789") in MODEL_WORDS and "_".join(words[1:]) in _ROLE_SUFFIXES


def _plainly_detached(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.BaseString)):
        return True
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in GRAPH_BREAKING_METHODS
        return isinstance(func, cst.Name) and func.value in BREAKING_BUILTINS
    return False


def _is_cpu(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value in ("cpu", b"cpu")
    if isinstance(expr, cst.Call) and expr.args:
        return _is_cpu(expr.args[0].value)
    return False
