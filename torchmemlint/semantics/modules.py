"""``nn.Module`` objects, as opposed to tensors: what constructs one, which ``self`` attributes of
a class hold submodules or parameters, and whether an expression names a module.

Setting ``requires_grad`` means something different on the two (TML016), and calling a
submodule attribute (``self.fc1(x)``) is a forward pass whose result holds a graph."""
from __future__ import annotations

import re
import sys
from typing import Optional

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Scopes, assigned_pairs, module_itself, terminal_name
from torchmemlint.semantics.tree import Tree

# torch.nn classes that are tensors, not modules.
_TENSOR_CLASSES = frozenset({"Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer"})
# Module containers whose elements are tensors (``self.scales[name]`` is a Parameter).
PARAMETER_CONTAINERS = frozenset({"torch.nn.ParameterList", "torch.nn.ParameterDict"})
# Capitalised callables that build tensors.
TENSOR_CONSTRUCTORS = frozenset({
    "torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.autograd.Variable", "torch.Tensor",
    "torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor", "torch.HalfTensor",
    "torch.BoolTensor", "torch.IntTensor", "torch.ByteTensor", "torch.cuda.FloatTensor",
    "torch.cuda.LongTensor", "torch.cuda.HalfTensor",
})
_TENSOR_CONSTRUCTOR_NAMES = frozenset(q.split(".")[-1] for q in TENSOR_CONSTRUCTORS)
# Callables a module is often built with that are no submodules (their results hold no activations).
_NOT_A_SUBMODULE = re.compile(r"tokeni[sz]er|processor|transforms?$|collat|loader|sampler|scheduler|optim|logger|"
                              r"callback|metric", re.IGNORECASE)
# Libraries whose ``from_pretrained`` / factories return models (their tokenizers and configs do not).
_MODEL_LIBRARIES = ("transformers.", "diffusers.", "peft.", "sentence_transformers.", "open_clip.", "timm.")
_NOT_A_MODEL = re.compile(r"Tokenizer|Processor|Config|FeatureExtractor|Scheduler|Pipeline|Dataset|Normalizer|Collator|Arguments|Callback")
# The last word of a name that holds a module: ``self.text_encoder``, ``netG``, ``model.backbone``.
MODULE_NAME = re.compile(
    r"(?:^|_)(?:model|models|net|network|encoder|decoder|backbone|classifier|head|heads|neck|stem|"
    r"generator|discriminator|critic|actor|policy|teacher|student|features|layer|layers|block|blocks|"
    r"module|submodule|child|fc|conv|bn|lstm|rnn|gru|mlp|cnn|transformer|bert|roberta|gpt2?|vit|"
    r"resnet|vgg|unet|vae|autoencoder|embeddings|embedder|quantizer|pooler|lm_head|tower|branch|"
    r"extractor|detector|predictor|regressor)\d*$|^(?:G|D|net[A-Z]\w*|netG|netD)$",
    re.IGNORECASE,
)
# Words that name a submodule as an attribute (``vgg.features``, ``bert.embeddings``) but usually a
# tensor as a plain variable (``features = backbone(x)``).
_TENSOR_AS_VARIABLE = re.compile(r"(?:^|_)(?:features|embeddings)\d*$", re.IGNORECASE)
# Factories called by a lower-case name that return a model (``torchvision.models.resnet50()``,
# ``build_model(cfg)``, ``timm.create_model(...)``).
_MODEL_FACTORY = re.compile(r"(?:^|_)(?:model|net|encoder|decoder|backbone|resnet\d*|vgg\d*\w*|densenet\d*)$",
                            re.IGNORECASE)
# Methods only tensors have: what they return is a tensor, never a module.
TENSOR_METHODS = frozenset({
    "detach", "clone", "view", "view_as", "reshape", "flatten", "contiguous", "squeeze", "unsqueeze",
    "permute", "transpose", "t", "sum", "mean", "softmax", "log_softmax", "sigmoid", "relu", "tanh", "exp",
    "log", "abs", "sign", "new_zeros", "new_ones", "new_empty", "new_full", "expand", "expand_as", "repeat",
    "narrow", "matmul", "mm", "bmm", "pow", "clamp", "gather", "masked_fill", "index_select", "norm",
    "requires_grad_", "numpy", "pin_memory",
})
_MODULE_ITERATORS = frozenset({"modules", "children", "named_modules", "named_children"})
# Attributes that hold a ModuleList/Sequential: ``model.layers``, ``bert.encoder.layer``.
_MODULE_CONTAINER = re.compile(r"^(?:layers?|blocks?|modules|children|heads|stages|encoders|decoders|"
                               r"h|resblocks|transformer_blocks)$")


class Modules:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self._attribute_kinds: dict[cst.ClassDef, dict[str, str]] = {}
        self._factories: dict[cst.FunctionDef, bool] = {}

    # -- constructors -----------------------------------------------------------------
    def is_constructor(self, expr: Optional[cst.BaseExpression]) -> bool:
        """``expr`` builds (or loads) a module: ``nn.Linear(...)``, a Module class of this file,
        ``AutoModel.from_pretrained(...)``, ``torchvision.models.resnet50()``, ``Net().to(dev)``,
        ``merge_fn or nn.Identity()`` (a module given, else a default one)."""
        if isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            return self.is_constructor(expr.right)
        moved = module_itself(expr) is not expr and isinstance(expr, cst.Call) and \
            isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("to", "cuda")
        expr = module_itself(expr)
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        qualified = self.imports.qualify(func)
        if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained":
            owner = self.imports.qualify(func.value) or dotted_name(func.value) or ""
            return owner.startswith(_MODEL_LIBRARIES) and not _NOT_A_MODEL.search(owner)
        if qualified is not None:
            if qualified in TENSOR_CONSTRUCTORS:
                return False
            last = qualified.split(".")[-1]
            if qualified.startswith("torch.nn.") and last[:1].isupper():
                return last not in _TENSOR_CLASSES and not qualified.startswith("torch.nn.functional.")
            if qualified.startswith(("torchvision.models.", "timm.", "transformers.", "diffusers.")):
                return last[:1].isupper() and not _NOT_A_MODEL.search(last) or bool(_MODEL_FACTORY.search(last))
            if qualified.split(".", 1)[0] in sys.stdlib_module_names:
                return False  # ``pathlib.Path(...)``, ``collections.OrderedDict()``
            if last[:1].isupper() and not qualified.startswith("torch."):
                # A class from another package (``Monitor(env)``, ``Timer()``, ``CN()``): a module
                # only when its name says so (``Generator``, ``ResNet``, ``MyNet``) or it is moved
                # to a device (``InceptionV3([idx]).to(device)``).
                return (moved or bool(MODULE_NAME.search(last))) and not _NOT_A_MODEL.search(last)
        name = terminal_name(func)
        if name is None:
            return False
        local = self.scopes.classes_by_name.get(name)
        if local is not None:
            return self.scopes.is_torch_module_class(local)
        if name[:1].isupper():
            factories = [f for f in self.scopes.functions_by_name.get(name, ()) if self.scopes.function_of(f) is None]
            if factories and isinstance(func, cst.Name):
                # A function of the file, capitalized: ``ResNet18()`` returning ``ResNet(...)`` builds
                # a module, ``Mix_max_process(x)`` returning a scaled tensor does not
                return bool(MODULE_NAME.search(name.lower())) or any(
                    self._returns_constructor(f) for f in factories)
            return name not in _TENSOR_CONSTRUCTOR_NAMES and not _NOT_A_MODEL.search(name)
        return bool(_MODEL_FACTORY.search(name))

    def _returns_constructor(self, function: cst.FunctionDef) -> bool:
        known = self._factories.get(function)
        if known is None:
            self._factories[function] = False  # (recursion guard: ``def Net(): return Net()``)
            known = self._factories[function] = any(
                self.is_constructor(r.value) for r in self.scopes.scope_nodes(function, cst.Return))
        return known

    # -- attributes of a class -----------------------------------------------------------
    def attribute_kinds(self, cls: cst.ClassDef) -> dict[str, str]:
        """``self.<name>`` attributes a class (or a base class of this file) assigns, as
        ``"module"``, ``"parameters"`` (a ParameterList/ParameterDict: a module whose elements
        are tensors) or ``"tensor"`` where the assigned value says which."""
        cached = self._attribute_kinds.get(cls)
        if cached is not None:
            return cached
        kinds: dict[str, str] = {}
        self._attribute_kinds[cls] = kinds  # recursion guard for odd inheritance
        for base in self.scopes.class_bases(cls):
            local = self.scopes.classes_by_name.get(base)
            if local is not None and local is not cls:
                kinds.update(self.attribute_kinds(local))
        for assign in self.tree.descendants(cls, cst.Assign):
            for target in assign.targets:
                attribute = target.target
                if isinstance(attribute, cst.Attribute) and dotted_name(attribute.value) == "self":
                    kind = self._kind_of(assign.value)
                    if kind is not None:
                        kinds[attribute.attr.value] = kind
        for call in self.tree.descendants(cls, cst.Call):  # self.add_module("x", m) / register_*
            func = call.func
            if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and len(call.args) >= 2 and \
                    isinstance(call.args[0].value, cst.SimpleString):
                name = call.args[0].value.evaluated_value
                if isinstance(name, str) and func.attr.value in ("add_module", "register_module"):
                    kinds[name] = "module"
                elif isinstance(name, str) and func.attr.value in ("register_parameter", "register_buffer"):
                    kinds[name] = "tensor"
        if self.scopes.is_torch_module_class(cls):
            kinds.update((name, "module") for name in self._called_constructor_arguments(cls) if name not in kinds)
        kinds.update((name, "module") for name in self._constructor_arguments_with_parameters(cls) if name not in kinds)
        return kinds

    def _own_init(self, cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
        return next((f for f in self.scopes.functions_by_name.get("__init__", ()) if self.scopes.class_of(f) is cls), None)

    def _constructor_arguments_with_parameters(self, cls: cst.ClassDef) -> set[str]:
        """Attributes set in ``__init__`` from a parameter whose ``.parameters()`` it reads, or from
        a deep copy of one (a learner's ``self.agent, self.mixer = agent, mixer`` beside
        ``Adam(list(agent.parameters()) + ...)`` and ``self.target_agent = copy.deepcopy(agent)``):
        modules, whatever the class that keeps them."""
        init = self._own_init(cls)
        if init is None:
            return set()
        params = {p.name.value for p in init.params.params}
        read = {name for call in self.scopes.scope_nodes(init, cst.Call)
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("parameters", "named_parameters")
                and (name := dotted_name(call.func.value)) in params}
        found = set()
        for assign in self.scopes.scope_nodes(init, cst.Assign):
            for target in assign.targets:
                for assigned, value in assigned_pairs(target.target, assign.value):
                    if isinstance(value, cst.Call) and self.imports.qualify(value.func) == "copy.deepcopy" and value.args:
                        value = value.args[0].value
                    if isinstance(assigned, cst.Attribute) and dotted_name(assigned.value) == "self" and \
                            isinstance(value, cst.Name) and value.value in read:
                        found.add(assigned.attr.value)
        return found

    def _called_constructor_arguments(self, cls: cst.ClassDef) -> set[str]:
        """Attributes of a module class set from an ``__init__`` parameter (``self.pooling =
        pooling``) and called (``self.pooling(x)``): submodules the module was built with."""
        init = self._own_init(cls)
        if init is None:
            return set()
        params = {p.name.value for p in init.params.params}
        given = {target.target.attr.value for assign in self.scopes.scope_nodes(init, cst.Assign)
                 if isinstance(assign.value, cst.Name) and assign.value.value in params
                 for target in assign.targets
                 if isinstance(target.target, cst.Attribute) and dotted_name(target.target.value) == "self"}
        return {call.func.attr.value for call in self.tree.descendants(cls, cst.Call)
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in given
                and dotted_name(call.func.value) == "self" and not _NOT_A_SUBMODULE.search(call.func.attr.value)}

    def _kind_of(self, value: cst.BaseExpression) -> Optional[str]:
        inner = module_itself(value)
        if isinstance(inner, cst.Call) and self.imports.qualify(inner.func) in PARAMETER_CONTAINERS:
            return "parameters"
        if self.is_constructor(value):
            return "module"
        if isinstance(inner, cst.Call):
            qualified = self.imports.qualify(inner.func) or ""
            if qualified in TENSOR_CONSTRUCTORS or qualified.startswith("torch.") and not \
                    qualified.startswith("torch.nn."):
                return "tensor"
        return None

    def submodule_attribute(self, func: cst.BaseExpression) -> bool:
        """``self.<name>`` where the enclosing class assigns a module to ``<name>``."""
        if not (isinstance(func, cst.Attribute) and dotted_name(func.value) == "self"):
            return False
        method = self.scopes.function_of(func)
        cls = self.scopes.self_class(method)
        return cls is not None and self.attribute_kinds(cls).get(func.attr.value) == "module"

    def submodule_loop_target(self, loop: cst.For) -> Optional[cst.BaseExpression]:
        """The target that ``for block in self.blocks`` (or ``for i, block in
        enumerate(self.blocks)``) binds to each submodule of a container module the class built
        (an ``nn.ModuleList``, an ``nn.Sequential``); None for a loop over anything else."""
        iterable, target = loop.iter, loop.target
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "enumerate" and iterable.args and \
                isinstance(target, cst.Tuple) and len(target.elements) == 2:
            iterable, target = iterable.args[0].value, target.elements[1].value
        return target if self.submodule_attribute(iterable) else None

    # -- is this a module? --------------------------------------------------------------
    def is_module(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> bool:
        """Whether ``expr`` names an ``nn.Module`` (not a tensor). Known bindings decide first;
        names decide only where nothing in the file says what the value is."""
        at = at if at is not None else expr
        if isinstance(expr, cst.Name):
            return self._name_is_module(expr.value, at)
        if isinstance(expr, cst.Attribute):
            if dotted_name(expr.value) == "self":
                method = self.scopes.function_of(at)
                cls = self.scopes.self_class(method)
                kind = self.attribute_kinds(cls).get(expr.attr.value) if cls is not None else None
                if kind is not None:
                    return kind in ("module", "parameters")
            return bool(MODULE_NAME.search(expr.attr.value))
        if isinstance(expr, cst.Subscript):  # only container modules can be indexed: model.layers[0]
            return self.is_module(expr.value, at) and not self._holds_parameters(expr.value, at)
        return False

    def _holds_parameters(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``self.scales`` built as ``nn.ParameterDict(...)``: its elements are tensors."""
        if isinstance(expr, cst.Attribute) and dotted_name(expr.value) == "self":
            method = self.scopes.function_of(at)
            cls = self.scopes.self_class(method)
            return cls is not None and self.attribute_kinds(cls).get(expr.attr.value) == "parameters"
        if isinstance(expr, cst.Name):
            return any(b.value is not None and self._kind_of(b.value) == "parameters"
                       for b in self.scopes.bindings_of(expr.value, at))
        return False

    def _name_is_module(self, name: str, at: cst.CSTNode) -> bool:
        bindings = self.scopes.bindings_of(name, at)
        kinds = set()
        for binding in bindings:
            if isinstance(binding.node, cst.For):
                kinds.add("module" if self._iterates_modules(binding.node, name) else None)
            elif binding.value is not None:
                kinds.add(self._value_kind(binding.value, binding.node))
        if "module" in kinds or "parameters" in kinds:
            return True
        if "tensor" in kinds or (bindings and isinstance(bindings[0].node, cst.For) and None in kinds):
            return False
        return bool(MODULE_NAME.search(name)) and not _TENSOR_AS_VARIABLE.search(name)

    def _value_kind(self, value: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
        """``"module"`` for a constructor or a copy of a module, ``"tensor"`` for what a forward
        pass, a torch function or arithmetic returns, None when the file does not say."""
        kind = self._kind_of(value)
        if kind is not None:
            return kind
        if isinstance(value, cst.Call):
            if self.imports.qualify(value.func) == "copy.deepcopy" and value.args:
                return "module" if self.is_module(value.args[0].value, at) else None
            if isinstance(value.func, cst.Attribute) and value.func.attr.value in TENSOR_METHODS:
                return "tensor"
            if isinstance(value.func, (cst.Name, cst.Attribute)) and self.is_module(value.func, at):
                return "tensor"  # calling a module runs its forward
        if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)):
            return "tensor"
        return None

    def _iterates_modules(self, loop: cst.For, name: str) -> bool:
        """``for m in model.modules()``, ``for name, child in model.named_children()``,
        ``for layer in model.encoder.layer[:8]``, ``for i, block in enumerate(self.blocks)``."""
        iterable, target = loop.iter, loop.target
        named = False
        while True:
            if isinstance(iterable, cst.Subscript):
                iterable = iterable.value
            elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.args and \
                    iterable.func.value in ("enumerate", "list", "reversed", "tuple"):
                named = named or iterable.func.value == "enumerate"
                iterable = iterable.args[0].value
            else:
                break
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
                iterable.func.attr.value in _MODULE_ITERATORS:
            named = named or iterable.func.attr.value.startswith("named_")
        elif isinstance(iterable, (cst.List, cst.Tuple)):  # for net in [netD_A, netD_B]
            if not iterable.elements or not all(self.is_module(e.value, loop) for e in iterable.elements):
                return False
        elif not _MODULE_CONTAINER.search(terminal_name(iterable) or ""):
            return False
        if named:
            return isinstance(target, cst.Tuple) and len(target.elements) == 2 and \
                isinstance(target.elements[1].value, cst.Name) and target.elements[1].value.value == name
        return isinstance(target, cst.Name)
