"""Value flow: what a value holds — an autograd graph, a tensor on an accelerator, a container or
record of those, a module, an optimizer, a plain number — wherever it travels: through names,
tuple/list/dict packing and unpacking, comprehensions, attributes and items of model outputs,
``self`` attributes across the methods of a class, and the returns of the file's functions (one
summary per function, computed once and used at every call site, also through
``functools.partial``, bound methods and objects built from the file's classes).

RULES.md, "what keeps the graph and what breaks it": ``.cpu()``, ``.to()``, ``.clone()``,
``.float()``, views, indexing, ``torch.stack/cat`` and arithmetic keep the graph; only
``.detach()``, ``.item()``, ``.tolist()``, ``float()``, ``int()`` and values computed under a
grad-disabled context break it. A value knows *that* it may hold a graph (``graph``) and, where the
file says so, *what* it surely is (``kind``): a fix may call ``.item()`` only on what is surely a
one-element tensor, never on a Python float or a dict of losses.

Inside a function, a parameter's value is unknown; what derives from it without breaking the graph
carries the parameter's name (``params``), so a function's summary says "returns a graph of its
own" apart from "returns what its first argument holds", and each call site fills in its own
arguments.

Where values come from, besides the obvious (model calls, loss functions, torch functions): a
parameter of the model (``nn.Parameter``, ``model.parameters()``) is a *leaf* — no graph itself,
but whatever is computed from it has one; a ``torch.distributions`` object carries its parameters'
graph into ``log_prob``/``rsample`` (not into ``sample``); a forward hook's input and output hold
the graph of the forward that calls it (unless every hooked forward runs under ``no_grad``); a
list holds what its scope appends to it.

Summaries stop at the file: a function of another module of the package is not read (each file is
parsed and cached on its own, so ``-j`` and the result cache stay per file). A call of something
unknown keeps its arguments' graph; a method of an object from elsewhere that the rules know by
name (``update`` of a ``*Meter``) is judged by that name."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Iterable, Optional, Union

import libcst as cst

from torchmemlint.semantics.autograd import FUNCTION_BASES
from torchmemlint.semantics.calls import Callee, Calls
from torchmemlint.semantics.grad import GradContexts
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.modules import MODULE_NAME, Modules
from torchmemlint.semantics.params import PARAMETER_CLASSES, dotted_chain_methods, in_optimizer_step, iterates_parameters
from torchmemlint.semantics.scopes import (Scopes, iterable_identifiers, keyword_value, literal_key, module_itself,
                                           parameter_names, root_name, subscript_key, terminal_name)
from torchmemlint.semantics.tree import Tree, deleted
from torchmemlint.semantics.vocabulary import (DETACHED_TENSOR_ATTRIBUTES, GRAPH_BREAKING_METHODS, HOOK_REGISTRATIONS,
                                              IN_PLACE_WRITES, JOIN_FUNCTIONS, LOADER_ITERABLE, MODULE_RETURNING_METHODS, NON_TENSOR_ANNOTATIONS,
                                              PARAMETER_FREE_MODULES,
                                              is_class_name, is_model_name, names_a_count, names_integers, names_text,
                                              torch_gives_no_tensor)

if TYPE_CHECKING:
    from torchmemlint.semantics.calls import Function

# What a value surely is (``Value.kind``); None: the file does not say.
TENSOR = "tensor"
NUMBER = "number"          # a Python number (or bool)
SEQUENCE = "sequence"      # a tuple or list
MAPPING = "mapping"        # a dict
RECORD = "record"          # an object with attributes: a dataclass, namedtuple, SimpleNamespace, model output
MODULE = "module"          # an nn.Module
OPTIMIZER = "optimizer"
DISTRIBUTION = "distribution"  # a ``torch.distributions`` object: its parameters' graph, and what it computes
OTHER = "other"            # something known to hold no tensor: a string, None, a dtype, a hook handle
_NOTHING = "nothing"       # no value at all (the identity of ``join``: a recursion cut short)

_NUMBER_METHODS = frozenset({"item", "size", "dim", "numel", "nelement", "element_size", "data_ptr", "stride",
                             "storage_offset", "is_contiguous", "get_device", "count", "__len__"})
_INTEGER_TENSOR_METHODS = frozenset({"argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "nonzero",
                                     "isnan", "isinf", "isfinite", "all", "any", "long", "int", "bool", "byte",
                                     "char", "short"})
# Tensor methods that make a fresh tensor on the receiver's device (no graph: only its dtype
# and device are taken): ``x.new_zeros(n)``, the legacy ``x.new(n, n)``.
_FRESH_TENSOR_METHODS = frozenset({"new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
# Attributes that are not the tensor's data (metadata, or the detached ``.data``/``.grad``).
NON_GRAPH_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "requires_grad", "grad", "data", "is_cuda", "ndim", "grad_fn",
    "is_leaf", "layout", "T_", "names", "training",
})
BREAKING_BUILTINS = frozenset({
    "float", "int", "bool", "len", "str", "repr", "round", "isinstance", "print", "range",
    "enumerate", "format", "hash", "id", "type",
})
_NUMBER_BUILTINS = frozenset({"float", "int", "bool", "len", "round", "hash", "id", "isinstance"})
_SEQUENCE_BUILTINS = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset"})
# Type names a test spells to single out containers (``isinstance(h, (tuple, list))``).
_CONTAINER_TYPES = frozenset({"tuple", "list", "dict", "Sequence", "Mapping", "Iterable", "abc"})
_FACTORIES = frozenset({
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
    "linspace", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "eye", "from_numpy", "randperm", "logspace", "tensor_split", "Tensor", "FloatTensor",
    "LongTensor", "DoubleTensor", "HalfTensor", "BoolTensor", "IntTensor", "ByteTensor", "scalar_tensor",
})
# Types an ``isinstance`` test names whose values hold no tensor (not containers: a list may).
_NON_TENSOR_TYPES = frozenset({"int", "float", "bool", "str", "bytes", "numbers.Number", "numpy.ndarray",
                               "numpy.generic", "numpy.number", "numpy.floating"})
_JOINS = frozenset({"cat", "concat", "concatenate", "stack", "vstack", "hstack", "dstack", "row_stack",
                    "column_stack"})
_TENSOR_NAMESPACES = frozenset({"", "nn.functional", "linalg", "fft", "special", "sparse", "nested"})
# Libraries whose functions return Python numbers or arrays, never a torch graph; the model
# profilers among them (``thop.profile(model, inputs=(x,))``) run the model but return counts.
_NUMERIC_LIBRARIES = ("math.", "numpy.", "statistics.", "random.", "time.", "sklearn.", "scipy.", "thop.",
                      "ptflops.", "torchinfo.", "torchsummary.")
# Reductions that return a 0-dim tensor when called without a dimension.
_FULL_REDUCTIONS = frozenset({"mean", "sum", "norm", "max", "min", "std", "var", "prod", "amax", "amin"})
# Methods that keep a loss a loss: elementwise maths, dtype/device moves, and broadcasting one
# value over the batch (``loss.repeat(batch_size)`` holds batch_size copies of one number).
_LOSS_KEEPING_METHODS = frozenset({
    "detach", "float", "double", "half", "bfloat16", "clone", "contiguous", "to", "cuda", "abs",
    "neg", "sqrt", "exp", "log", "mul", "div", "add", "sub", "pow", "clamp", "repeat", "expand",
    "unsqueeze", "view", "reshape", "flatten",
})
# Methods that surely return one tensor when called on one.
# Tensor methods that compute from the receiver (and their operands) alone.
_TENSOR_MATHS = _FULL_REDUCTIONS | _LOSS_KEEPING_METHODS | {"squeeze", "log_softmax", "softmax", "sigmoid", "tanh"}
SURE_TENSOR_METHODS = frozenset({
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "to", "cuda", "cpu", "float",
    "half", "double", "bfloat16", "clone", "detach", "contiguous", "requires_grad_", "fill_", "zero_",
    "view", "reshape", "expand", "repeat", "unsqueeze", "squeeze", "permute", "transpose", "t",
})
# torch.nn modules whose forward returns one tensor (not LSTM's tuple, not attention's pair).
_ONE_TENSOR_MODULES = frozenset({
    "Sequential", "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
    "ReLU", "GELU", "Sigmoid", "Tanh", "Softmax", "Dropout", "Identity", "Flatten", "MaxPool2d", "AvgPool2d",
    "AdaptiveAvgPool2d", "TransformerEncoder",
})
# Methods of a model that run (part of) its forward pass.
_FORWARD_LIKE = re.compile(r"forward|encode|decode|embed|features|logits|predict_noise|denoise|score|"
                           r"attention|project|classify|head|backbone|_step$")
_DISTRIBUTION_DRAWS = frozenset({"sample", "sample_n", "enumerate_support"})
# Collective helpers (accelerate, torch.distributed wrappers) that gather a value from every process.
_GATHERING_METHODS = frozenset({"gather", "gather_for_metrics", "all_gather", "reduce"})
# Methods of data scalers and normalizers that hand back the tensor they are given, rescaled.
_TRANSFORMING_METHOD = re.compile(r"(?:inverse_)?(?:transform|normalize|denormalize|unnormalize|standardize|"
                                  r"destandardize|rescale|unscale)$")
# Methods of a model that return no tensor on its device.
_MODEL_NON_TENSOR_METHODS = frozenset({
    "state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "children",
    "named_children", "modules", "named_modules", "train", "eval", "zero_grad", "apply", "cpu",
    "requires_grad_", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_buffer", "load_state_dict", "num_parameters", "get_input_embeddings", "save_pretrained",
    "extra_repr", "type", "share_memory",
})
# Helpers of other modules named for turning tensors into arrays or Python values.
_TO_HOST_VALUES = re.compile(r"((^|_)(to|as)_?|2)(numpy|np|list|python|scalars?|floats?)$|^numpy$", re.IGNORECASE)
_DEVICE_NAME = re.compile(r"device|dev\b|gpu|cuda|rank", re.IGNORECASE)
# Methods and attributes a tensor has and a tuple, list, dict, ``ModelOutput`` or module lacks.
_TENSOR_ONLY_MEMBERS = frozenset({
    "argmax", "argmin", "argsort", "view", "view_as", "reshape", "shape", "size", "detach", "softmax",
    "log_softmax", "sigmoid", "backward", "item", "dim", "numel", "unsqueeze", "squeeze", "permute",
    "transpose", "sum", "mean", "topk", "clamp", "masked_fill", "expand", "contiguous", "numpy", "tolist",
    "max", "min", "exp", "log", "abs", "norm", "std", "var", "ndim", "dtype", "device", "grad", "data",
    "requires_grad", "cpu", "cuda", "squeeze_", "flatten", "chunk", "split", "gather", "eq", "ne",
})
# Operators a tuple, list or dict lacks (by class name: naming LibCST's classes here would import
# LibCST with this module, which a warm run never needs).
TENSOR_OPERATORS = frozenset({"Subtract", "Divide", "Power", "MatrixMultiply", "FloorDivide"})
# Record classes of the standard library that keep their keyword arguments as attributes.
_RECORD_FACTORIES = frozenset({"types.SimpleNamespace", "argparse.Namespace"})
MAX_DEPTH = 40
# A tensor type named in a string annotation (``"torch.Tensor"``, ``Optional["Tensor"]``), not
# another class whose name starts with it (``"TensorDescription"``).
_TENSOR_IN_STRING_ANNOTATION = re.compile(r"\b(?:Tensor|FloatTensor|LongTensor|BoolTensor|HalfTensor)\b")
_NONE_OPEN = 1 << 30  # no open query leaned on
# Classes a value tested by ``isinstance(value, (int, float))`` is then, none of them a tensor.
_NUMBER_TYPES = frozenset({"int", "float", "bool", "complex", "str", "numbers", "Number", "Real", "Integral"})
_MAX_WHY = 4


@dataclass(frozen=True)
class Value:
    """What an expression may hold (see the module docstring). ``graph``: it may hold an autograd
    graph; ``detached``: it surely holds none; ``device``: it may be or hold a tensor on an
    accelerator; ``scalar``: surely a one-element tensor; ``loss``: a loss value. Structure, where
    known: ``elements`` of a tuple, ``fields`` (a dict's literal keys, a record's attributes),
    ``element`` (any element). ``alias``: the value *is* this parameter of the enclosing function.
    ``leaf``: a parameter (or another tensor that requires grad), which holds no graph itself but gives one
    to whatever is computed from it. ``why``: where the graph was made and how it travelled, (node,
    words), oldest first."""

    graph: bool = False
    detached: bool = False
    device: bool = False
    leaf: bool = False  # a tensor that requires grad (a parameter): what is computed from it holds a graph
    kind: Optional[str] = None
    scalar: bool = False
    loss: bool = False
    params: frozenset[str] = frozenset()
    # Parameters whose device (not graph) this value has: ``z.detach()`` or ``z.argmax(1)`` of a
    # parameter ``z`` is on whatever device the caller's ``z`` is, and holds no graph whatever the
    # caller passes. Read where a function keeps it (``Stores.kept_parameters``) and, for the device
    # alone, where a call returns it; not carried further.
    device_params: frozenset[str] = frozenset()
    # Surely on the host, whatever device its parameters are on (``z.cpu()`` of a parameter ``z``):
    # a caller's device tensor passed in does not make it a device tensor.
    host: bool = False
    alias: Optional[str] = None
    elements: Optional[tuple["Value", ...]] = None
    fields: Optional[tuple[tuple[str, "Value"], ...]] = None
    element: Optional["Value"] = None
    cls: Optional[str] = None  # the file's class an object was built from (qualified for torch.nn's)
    why: tuple[tuple[cst.CSTNode, str], ...] = ()

    # -- reading parts ---------------------------------------------------------------------
    def parts(self) -> list["Value"]:
        """Its known parts: any element, each position of a tuple, each field."""
        return [v for v in (self.element, *(self.elements or ()), *(v for _, v in self.fields or ())) if v]

    def any_element(self) -> "Value":
        """What iterating over (or indexing) this value may give."""
        parts = self.parts()
        if parts:
            return join(parts)
        if self.kind in (NUMBER, OTHER):
            return Value(kind=OTHER, detached=True)
        if self.kind == MODULE:
            return Value(kind=MODULE, device=self.device)
        if self.kind == OPTIMIZER:
            return Value(detached=True)
        return Value(graph=self.graph, detached=self.detached, device=self.device, params=self.params,
                     device_params=self.device_params, host=self.host,  # (a row of ``z.cpu()`` is on the host)
                     kind=TENSOR if self.kind == TENSOR else None, why=self.why)

    def field(self, name: str) -> Optional["Value"]:
        for key, value in self.fields or ():
            if key == name:
                return value
        return None

    def item(self, index: int) -> "Value":
        if self.elements is not None and -len(self.elements) <= index < len(self.elements):
            return self.elements[index]
        return self.any_element()

    # -- changing facets -------------------------------------------------------------------
    @property
    def device_sources(self) -> frozenset[str]:
        """The parameters a graph-free result computed from this value (its indices, a comparison,
        a detached copy) takes its device from."""
        return self.params | self.device_params

    def derived(self, **changes) -> "Value":
        """A value computed from this one by an operation that keeps the graph (the structure
        and the alias are not carried over)."""
        base = dict(graph=self.graph or self.leaf, detached=self.detached, device=self.device, params=self.params,
                    device_params=self.device_params, host=self.host, why=self.why)
        base.update(changes)
        return Value(**base)

    def without_graph(self, keep_params: bool = False) -> "Value":
        """This value with no graph. ``keep_params``: what is computed from it where autograd is
        off keeps its parameters, for the device the caller's arguments give it (``_substitute``
        takes no graph from them: it is ``detached``)."""
        keep_params = keep_params and bool(self.params)
        return replace(self, graph=False, detached=True, leaf=False, params=self.params if keep_params else frozenset(),
                       alias=None, why=(),
                       elements=tuple(e.without_graph(keep_params) for e in self.elements) if self.elements else self.elements,
                       fields=tuple((k, v.without_graph(keep_params)) for k, v in self.fields) if self.fields else self.fields,
                       element=self.element.without_graph(keep_params) if self.element else None)

    def travelled(self, node: cst.CSTNode, words: str) -> "Value":
        """The same value, with one more step in ``why`` (only where it holds a graph)."""
        if not self.graph or not self.why:
            return self
        return replace(self, why=(*self.why, (node, words))[-_MAX_WHY:])

    @property
    def is_nothing(self) -> bool:
        return self.kind == _NOTHING


NOTHING = Value(kind=_NOTHING, detached=True)
UNKNOWN = Value()
NUMBER_VALUE = Value(kind=NUMBER, detached=True)
OTHER_VALUE = Value(kind=OTHER, detached=True)


def join(values: Iterable[Value]) -> Value:
    """What a value may be when it may be any of ``values``."""
    result = NOTHING
    for value in values:
        result = _join2(result, value)
    return result


def _join2(a: Value, b: Value) -> Value:
    if a.is_nothing:
        return b
    if b.is_nothing:
        return a
    elements = None
    if a.elements is not None and b.elements is not None and len(a.elements) == len(b.elements):
        elements = tuple(_join2(x, y) for x, y in zip(a.elements, b.elements))
    fields = None
    if a.fields is not None or b.fields is not None:
        merged = dict(a.fields or ())
        for key, value in b.fields or ():
            merged[key] = _join2(merged[key], value) if key in merged else value
        fields = tuple(merged.items())
    element = None
    if a.element is not None or b.element is not None:
        element = _join2(a.element or NOTHING, b.element or NOTHING)
    if elements is None and (a.elements is not None or b.elements is not None):
        element = join([element or NOTHING, *(a.elements or ()), *(b.elements or ())])
    return Value(
        graph=a.graph or b.graph, detached=a.detached and b.detached, device=a.device or b.device,
        leaf=a.leaf or b.leaf, kind=a.kind if a.kind == b.kind else None,
        # (``vector_loss = criterion(...)`` in one branch, ``torch.tensor(0.0)`` in the other: still a loss)
        loss=(a.loss or _constant_scalar(a)) and (b.loss or _constant_scalar(b)) and (a.loss or b.loss),
        # (a running total: ``0.0``, then the sum of one-number tensors)
        scalar=(a.scalar or a.kind == NUMBER) and (b.scalar or b.kind == NUMBER) and (a.scalar or b.scalar),
        params=a.params | b.params, device_params=a.device_params | b.device_params,
        # (``z.cpu() if rank == 0 else None``: the other branch holds no tensor, so what comes is on the host)
        host=(a.host or a.kind in (NUMBER, OTHER)) and (b.host or b.kind in (NUMBER, OTHER)) and (a.host or b.host),
        alias=a.alias if a.alias == b.alias else None, elements=elements,
        fields=fields, element=element, cls=a.cls if a.cls == b.cls else None,
        why=a.why if a.graph or not b.graph else b.why,
    )


def _takes(method: cst.FunctionDef, call: cst.Call) -> bool:
    """``call``'s positional arguments fit ``method``'s parameters after ``self``."""
    params = method.params
    if any(a.star for a in call.args) or isinstance(params.star_arg, cst.Param):
        return True
    positional = [*params.posonly_params, *params.params][1:]
    given = sum(1 for a in call.args if a.keyword is None)
    return sum(1 for p in positional if p.default is None) <= given <= len(positional)


def _combine(values: list[Value], **facets) -> Value:
    """The result of an operation on ``values`` that keeps the graph (arithmetic, a tensor op);
    on the host when its tensors are (``torch.cat`` of ``.cpu()`` copies)."""
    facets.setdefault("host", any(v.host for v in values) and all(v.host or v.kind in (NUMBER, OTHER) for v in values))
    return Value(
        graph=any(v.graph or v.leaf for v in values), detached=all(v.detached for v in values),
        device=any(v.device for v in values), params=frozenset().union(*(v.params for v in values)),
        device_params=frozenset().union(*(v.device_params for v in values)),
        why=next((v.why for v in values if v.graph), ()), **facets)


def _pack(values: list[Value], **facets) -> Value:
    """A tuple, list or dict literal of ``values``: it holds their graphs, not a graph of its own
    (a parameter packed with its name, ``(name, p)``, is still a leaf in it, no graph)."""
    return replace(_combine(values, **facets), graph=any(v.graph for v in values))


@dataclass(frozen=True)
class Summary:
    """What calling a function gives back, with its parameters' contributions still open."""

    returns: Value


class Flow:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, grad: GradContexts, modules: Modules,
                 calls: Calls) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.grad = grad
        self.modules = modules
        self.calls = calls
        self._memo: dict[tuple[cst.CSTNode, cst.CSTNode], Value] = {}
        self._growth: dict[object, dict[str, list[cst.Call]]] = {}
        self._gathered: dict[object, set[str]] = {}
        self._loss_operands: dict[object, list[tuple[Union[cst.Assign, cst.AugAssign], set[str]]]] = {}
        self._backward_loops: dict[object, set] = {}
        self._writes: dict[object, dict[str, list[cst.Assign]]] = {}
        self._summaries: dict[object, Summary] = {}
        self._attributes: dict[tuple[cst.ClassDef, str], Value] = {}
        self._self_assignments: dict[cst.ClassDef, dict[str, list[SelfAssignment]]] = {}
        self._classes_by_assigned: Optional[dict[str, list[cst.ClassDef]]] = None
        self._tensor_uses: dict[object, set[str]] = {}
        self._host_moves: dict[object, dict[str, list[cst.Expr]]] = {}
        self._detaching_calls: dict[object, dict[str, list[cst.Expr]]] = {}
        self._item_detachers: dict[cst.FunctionDef, Optional[int]] = {}
        self._in_place_writes: dict[object, dict[str, list[cst.Call]]] = {}
        self._type_guards: dict[object, dict[str, list[cst.If]]] = {}
        self._guard_types: dict[cst.If, frozenset[str]] = {}
        self._mapping_uses: dict[object, set[str]] = {}
        self._grad_inputs: dict[object, set[str]] = {}
        self._scalar_losses: dict[object, set[str]] = {}
        self._depth = 0
        # Queries under way (values, summaries, class attributes), each with its place on the
        # stack. A query that meets one of them sees its recursion guard (nothing) instead: its
        # answer is then only provisional, good until the outermost query ends, and is not kept
        # for later questions (``self.M = new_M`` with ``new_M`` computed from ``self.M`` would
        # otherwise keep, for good, a ``new_M`` evaluated while ``self.M`` was still open).
        self._open: dict[object, int] = {}
        self._provisional: dict[object, object] = {}
        self._leaned_on = _NONE_OPEN

    # -- the question every rule asks --------------------------------------------------------
    def value(self, expr: cst.BaseExpression, at: Optional[cst.CSTNode] = None) -> Value:
        """What ``expr``, evaluated where ``at`` stands (default: where it stands), may hold."""
        at = at if at is not None else expr
        key = (expr, at)
        known = self._memo.get(key)
        if known is not None:
            return known
        if self._depth > MAX_DEPTH:
            return UNKNOWN
        self._depth += 1
        try:
            return self._answer(self._memo, key, NOTHING, lambda: self._evaluate(expr, at))
        finally:
            self._depth -= 1

    def _answer(self, cache: dict, key: object, guard, compute):
        """``cache[key]``, computed now if need be. A cycle (``h`` computed from ``h``) sees
        ``guard``, nothing more than it already has; what was computed leaning on a query still
        open further up is kept only until the outermost query ends."""
        known = self._provisional.get(key)
        if known is not None:
            return known
        level = self._open.get(key)
        if level is not None:
            self._leaned_on = min(self._leaned_on, level)
            return guard
        level = self._open[key] = len(self._open)
        outer, self._leaned_on = self._leaned_on, _NONE_OPEN
        try:
            result = compute()
        finally:
            del self._open[key]
            leaned, self._leaned_on = self._leaned_on, outer
        if leaned < level:
            self._provisional[key] = result
            self._leaned_on = min(outer, leaned)
        else:
            cache[key] = result
        if not self._open:
            self._provisional.clear()
        return result

    def summary(self, function: "Function") -> Summary:
        """The value a function returns (``yield``-ed values for a generator), its parameters'
        contributions left open."""
        known = self._summaries.get(function)
        if known is not None:
            return known
        return self._answer(self._summaries, function, Summary(NOTHING), lambda: self._summarise(function))

    def _summarise(self, function: "Function") -> Summary:
        if isinstance(function, cst.Lambda):
            returned = self.value(function.body)
        else:
            returns = [self._returned(r) for r in self.scopes.scope_nodes(function, cst.Return) if r.value]
            yields = [self.value(y.value, y) for y in self.scopes.scope_nodes(function, cst.Yield)
                      if isinstance(y.value, cst.BaseExpression)]
            returned = join(returns) if returns else (OTHER_VALUE if not yields else NOTHING)
            if yields:
                returned = join([returned, Value(kind=SEQUENCE, element=join(yields))])
            if self._returns_tensor_annotation(function) and returned.kind is None:
                returned = replace(returned, kind=TENSOR)
        return Summary(returned)

    def _returned(self, ret: cst.Return) -> Value:
        """What ``ret`` returns; nothing of a tensor where it returns ``x`` (or what hangs from
        it) under an ``if isinstance(x, np.ndarray):`` (or ``float``, ``int`` ...) that says ``x``
        is no tensor there (a ``to_scalar`` helper's branches)."""
        value = self.value(ret.value, ret)
        returned = root_name(ret.value, through_any_method=True)
        for ancestor in self.tree.ancestors(ret):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                break
            if isinstance(ancestor, cst.If) and self.tree.contains(ancestor.body, ret) and \
                    (tested := self._isinstance_test(ancestor.test)) is not None and tested[0] == returned and \
                    all((self.imports.qualify(c) or dotted_name(c)) in _NON_TENSOR_TYPES for c in tested[1]):
                return replace(value.without_graph(), device=False, device_params=frozenset())
        return value

    def at_callers(self, value: Value, function: "Function") -> Value:
        """``value`` (computed in ``function``) with its parameters' contributions filled in by
        what the file's call sites of ``function`` pass, all of them joined."""
        given: dict[str, list[Value]] = {}
        for site in self.calls.call_sites(function):
            callee = self.calls.callee(site)
            if callee is None:
                continue
            for name, arguments in self.calls.arguments(site, callee).items():
                given.setdefault(name, []).extend(self.value(expr, at) for expr, at in arguments)
        return _substitute(value, {name: join(values) for name, values in given.items()})

    def _tensor_test(self, test: cst.BaseExpression) -> tuple[Optional[str], bool]:
        """What ``isinstance(x, torch.Tensor)`` tests (and True), or ``not isinstance(...)``
        (and False); (None, False) for any other test."""
        negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
        found = self._isinstance_test(test.expression if negated else test)
        if found is None or len(found[1]) != 1 or \
                (self.imports.qualify(found[1][0]) or dotted_name(found[1][0])) not in ("torch.Tensor", "Tensor"):
            return None, False
        return found[0], not negated

    def returns_tensor(self, function: cst.FunctionDef) -> bool:
        """Annotated ``-> torch.Tensor`` (or a container of tensors), or it may return a tensor."""
        if function.returns is not None and _excludes_tensors(function.returns.annotation):
            return False  # ``-> bool``, ``-> dict[str, int]``: the author says what comes back
        returned = self.summary(function).returns
        if _may_hold_tensor(returned):
            return True
        # A bare ``-> torch.Tensor`` on a function whose every return builds a list, a tuple, a
        # dict or a number is wrong (a docstring's "list of tuples" annotated as a tensor): the
        # code says what comes back.
        if not self._returns_tensor_annotation(function):
            return False
        annotation = function.returns.annotation
        spelled = self.imports.qualify(annotation) if isinstance(annotation, (cst.Name, cst.Attribute)) else None
        return not (returned.kind in (SEQUENCE, MAPPING, NUMBER, OTHER)
                    and (spelled or _unquoted(annotation)) in _BARE_TENSOR_ANNOTATIONS)

    def takes_tensor(self, function: cst.FunctionDef) -> bool:
        """A parameter annotated as a tensor."""
        params = function.params
        return any(p.annotation is not None and self.annotation_has_tensor(p.annotation.annotation)
                   for p in (*params.posonly_params, *params.params, *params.kwonly_params))

    def module_parameter(self, function: cst.FunctionDef) -> Optional[str]:
        """A parameter that holds a module: annotated ``nn.Module``, named like a model without an
        annotation, or passed a module by a call of this file."""
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            annotation = param.annotation.annotation if param.annotation is not None else None
            if annotation is None and is_model_name(param.name.value) or annotation is not None and any(
                    n.value == "Module" for n in self.tree.descendants(annotation, cst.Name)):
                return param.name.value
        for site in self.calls.call_sites(function):
            callee = self.calls.callee(site)
            for name, given in (self.calls.arguments(site, callee).items() if callee is not None else ()):
                if any(self.value(expr, at).kind == MODULE for expr, at in given):
                    return name
        return None

    def _returns_tensor_annotation(self, function: cst.FunctionDef) -> bool:
        return function.returns is not None and self.annotation_has_tensor(function.returns.annotation)

    def annotation_has_tensor(self, annotation: cst.BaseExpression) -> bool:
        for node in self.tree.descendants(annotation, cst.Name):
            parent = self.tree.parent.get(node)
            expr = parent if isinstance(parent, cst.Attribute) and parent.attr is node else node
            qualified = self.imports.qualify(expr) or dotted_name(expr) or ""
            if qualified in _BARE_TENSOR_ANNOTATIONS:
                return True
        return any(_TENSOR_IN_STRING_ANNOTATION.search(s.value) for s in self.tree.descendants(annotation, cst.SimpleString))

    # -- evaluation --------------------------------------------------------------------------
    def _evaluate(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Value:
        # (``type(...) is``, not ``isinstance``: these are concrete LibCST classes, and each miss of
        # ``isinstance`` costs their ABC metaclass's check; this runs for every expression evaluated)
        expr_type = type(expr)
        if expr_type is cst.Name:
            return self._name(expr, at)
        if expr_type is cst.Call:
            value = self._call(expr, at)
            return self._computed(value, at)
        if expr_type is cst.Attribute:
            return self._attribute(expr, at)
        if expr_type is cst.Subscript:
            return self._subscript(expr, at)
        if expr_type is cst.BinaryOperation:
            return self._computed(self._arithmetic(self.value(expr.left, at), self.value(expr.right, at)), at)
        if expr_type is cst.UnaryOperation:
            if isinstance(expr.operator, cst.Not):
                return NUMBER_VALUE
            operand = self.value(expr.expression, at)
            return self._computed(operand.derived(kind=operand.kind, scalar=operand.scalar, loss=operand.loss), at)
        if expr_type is cst.BooleanOperation:
            return join([self.value(expr.left, at), self.value(expr.right, at)])
        if expr_type is cst.Comparison:
            operands = [self.value(expr.left, at), *(self.value(c.comparator, at) for c in expr.comparisons)]
            # (no graph; in a helper, on the device of the arguments it compares: ``indices == 0``)
            return Value(detached=True, device=any(v.device for v in operands),
                         device_params=frozenset().union(*(v.device_sources for v in operands)),
                         kind=NUMBER if all(v.kind == NUMBER for v in operands) else None)
        if expr_type is cst.IfExp:
            orelse = self.value(expr.orelse, at)
            if isinstance(expr.test, cst.Attribute) and expr.test.attr.value == "requires_grad" and \
                    dotted_name(expr.test.value) is not None and dotted_name(expr.test.value) == dotted_name(expr.orelse):
                orelse = orelse.without_graph()  # ``x.detach() if x.requires_grad else x``: that ``x`` has no graph
            body = self.value(expr.body, at)
            tested, is_tensor = self._tensor_test(expr.test)
            if tested is not None:  # ``x.item() if isinstance(x, torch.Tensor) else x``: that ``x`` is no tensor
                if is_tensor and dotted_name(expr.orelse) == tested:
                    orelse = orelse.without_graph()
                elif not is_tensor and dotted_name(expr.body) == tested:
                    body = body.without_graph()
            return join([body, orelse])
        if expr_type is cst.Tuple or expr_type is cst.List or expr_type is cst.Set:
            return self._sequence(expr.elements, at)
        if expr_type is cst.Dict:
            return self._mapping(expr, at)
        if expr_type is cst.ListComp or expr_type is cst.SetComp or expr_type is cst.GeneratorExp:
            elt = self.value(expr.elt, expr.elt)
            return _combine([elt], kind=SEQUENCE, element=elt)
        if expr_type is cst.DictComp:
            entry = self.value(expr.value, expr.value)
            return _combine([entry], kind=MAPPING, element=entry)
        if expr_type is cst.NamedExpr or expr_type is cst.Await:
            return self.value(expr.value if expr_type is cst.NamedExpr else expr.expression, at)
        if expr_type is cst.Integer or expr_type is cst.Float or expr_type is cst.Imaginary:
            return NUMBER_VALUE
        if expr_type is cst.Lambda or isinstance(expr, cst.BaseString):
            return OTHER_VALUE
        return UNKNOWN

    def _computed(self, value: Value, at: cst.CSTNode) -> Value:
        """An operation evaluated where autograd is off records no graph, whatever the caller's
        arguments hold (``with torch.no_grad(): _, dice = dice_loss(torch.sigmoid(output), y)``),
        and is still on their device."""
        if (value.graph or value.params) and self.grad.is_disabled(at):
            return value.without_graph(keep_params=True)
        return value

    # -- names -------------------------------------------------------------------------------
    def _name(self, expr: cst.Name, at: cst.CSTNode) -> Value:
        name = expr.value
        if name in ("True", "False", "None"):
            return OTHER_VALUE
        bound_by = self._comprehension_target(expr)
        if bound_by is not None:
            comp, target = bound_by
            return destructure(self.value(comp.iter, comp.iter).any_element(), target, name)
        lam = self._lambda_parameter(expr)
        if lam is not None:
            return self._hook_argument(lam, expr.value) or UNKNOWN
        bindings = self.scopes.bindings_of(name, at)
        values = [self._binding_value(b, name) for b in bindings]
        guards = [guard for b in bindings if (guard := self._tensor_guard(b.node, name)) is not None]
        if guards:  # ``if isinstance(val, torch.Tensor): val = val.item()``: where the branch was
            # skipped, what the earlier bindings gave was no tensor
            values = [v.without_graph() if any(self.tree.before(b.node, g) for g in guards) else v
                      for b, v in zip(bindings, values)]
        result = join(values) if values else UNKNOWN
        rewritten = False
        if result.kind in (MAPPING, RECORD) and (result.fields is not None or result.element is not None) and \
                len(bindings) == 1:
            before, result = result, self._with_items_rewritten(result, name, bindings[0].node, at)
            rewritten = result is not before
        elif result.kind is None and len(bindings) == 1 and name in self._item_writes(self.scopes.scope_of(at)):
            # ``for code, item in zip(codes, records): item["codes"] = code``: a mapping of unknown
            # items that holds what was written into it
            unknown = replace(result, kind=MAPPING, fields=(), element=result.any_element())
            written = self._with_items_rewritten(unknown, name, bindings[0].node, at)
            if written is not unknown:
                result, rewritten = written, True
        if result.kind == SEQUENCE:
            appended = self._appended_to(name, self.scopes.scope_of(at))
            if appended:  # ``preds = []`` ... ``preds.append(model(x))``: a list of what was appended
                part = join([result.element or NOTHING, *appended])
                result = replace(_combine([result, part], kind=SEQUENCE), element=part, elements=None)
        if result.kind is None and result.cls is None and name != "self" and \
                self.scopes.switched_to_a_mode(expr, training_too=True):
            # ``estimator = factory().to(device)``, then ``estimator.train()``: only a module has a
            # mode, and it holds no graph (what a call of an unknown factory seemed to make)
            result = replace(result, kind=MODULE, graph=False, detached=True, why=())
        if not result.graph and not rewritten and result.kind not in (MODULE, OPTIMIZER) and \
                self._differentiated(name, at, bindings):
            container = self._indexed_in_backward(name, self.scopes.scope_of(at))  # ``metrics["loss"].backward()``
            result = replace(result, graph=True, detached=False, kind=result.kind or (None if container else TENSOR),
                             why=((bindings[-1].node if bindings else expr, f"`{name}` is differentiated"),))
        scope = self.scopes.scope_of(at)
        if result.kind is None and (result.graph or result.device) and values and \
                all(v.kind in (None, TENSOR, _NOTHING) for v in values) and name in self._used_as_tensor(scope) \
                and name not in self._used_as_mapping(scope):
            result = replace(result, kind=TENSOR)
        if result.kind is None and not result.graph and names_text(name):
            return OTHER_VALUE  # ``image, target, fname = batch``: the file names are strings
        if result.graph and not result.alias and any(b.index is not None for b in bindings) and names_integers(name):
            # ``scores, decode_lengths, sort_ind = decoder(...)``: a position of a model's tuple
            # the flow cannot see into, named for integers
            result = replace(result, graph=False, why=())
        if not result.leaf and not result.graph and name in self._differentiated_in(scope):
            # ``torch.autograd.grad(loss, w)``: ``w`` requires grad, what is computed from it has a graph
            result = replace(result, leaf=True, detached=False)
        if result.kind in (TENSOR, None) and (result.graph or result.kind == TENSOR) and \
                name in self._backwarded_as_scalar(scope):
            result = replace(result, kind=TENSOR, scalar=True)  # ``backward()`` without a gradient needs one
        if (result.graph or result.params) and self._past_structure_guards(expr, scope):
            result = result.without_graph()
        if (result.graph or result.params or result.device) and self._tested_as_no_tensor(name, at):
            result = replace(result.without_graph(), device=False, device_params=frozenset())
        if result.device and any(all(self.tree.before(b.node, move) for b in bindings) and self.tree.before(move, at)
                                 for move in self._moved_to_host_in_place(scope).get(name, ())):
            result = replace(result, device=False)
        if not result.graph and result.kind in (TENSOR, None):
            for write in self._written_in_place(scope).get(name, ()):
                # ``row = torch.index_select(bank, 0, y)``; ``row.add_(torch.mul(v, 1 - m))``: the
                # row now holds ``v``'s graph (or what the caller's ``v`` holds)
                if self.tree.before(write, at) and all(self.tree.before(b.node, write) for b in bindings) \
                        and not self.grad.is_disabled(write):
                    added = join([self.value(a.value, write) for a in write.args])
                    if added.graph or added.params:
                        result = replace(result, graph=result.graph or added.graph, detached=False,
                                         params=result.params | added.params, why=result.why or added.why)
        return result

    def _written_in_place(self, scope) -> dict[str, list[cst.Call]]:
        """Statements ``name.add_(value)`` (any in-place write of a tensor method) of ``scope``, by name."""
        known = self._in_place_writes.get(scope)
        if known is None:
            known = self._in_place_writes[scope] = {}
            for statement in self.scopes.scope_nodes(scope, cst.Expr):
                call = statement.value
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                        isinstance(call.func.value, cst.Name) and call.func.attr.value in IN_PLACE_WRITES:
                    known.setdefault(call.func.value.value, []).append(call)
        return known

    def _past_structure_guards(self, expr: cst.Name, scope) -> bool:
        """``expr`` is read after ``if isinstance(x, torch.Tensor): return ...``, ``if
        isinstance(x, dict): return ...`` and ``if isinstance(x, (list, tuple)): return ...``
        of its function (a walker over nested results, ``detach_tree``): what is left there is
        neither a tensor nor a container of them."""
        if not isinstance(scope, cst.FunctionDef):
            return False
        covered: set[str] = set()
        for branch in self._early_return_guards(scope).get(expr.value, ()):
            if self.tree.before(branch, expr) and not self.tree.contains(branch, expr):
                covered |= self._guard_types[branch]
        return "Tensor" in covered and bool(covered & {"dict", "Mapping"}) and bool(covered & {"list", "tuple", "Sequence"})

    def _early_return_guards(self, scope: cst.FunctionDef) -> dict[str, list[cst.If]]:
        """``if isinstance(name, T): ... return ...`` statements of ``scope``, by name (the
        type names each tests in ``_guard_types``)."""
        known = self._type_guards.get(scope)
        if known is None:
            known = self._type_guards[scope] = {}
            for branch in self.scopes.scope_nodes(scope, cst.If):
                test, body = branch.test, branch.body
                if not (isinstance(body, cst.IndentedBlock) and body.body and isinstance(body.body[-1], cst.SimpleStatementLine)
                        and isinstance(body.body[-1].body[-1], cst.Return)):
                    continue
                tested = self._isinstance_test(test)
                if tested is not None:
                    self._guard_types[branch] = self._spelled_types(tested[1])
                    known.setdefault(tested[0], []).append(branch)
                elif isinstance(test, cst.Call) and test.args and isinstance(test.args[0].value, cst.Name) and \
                        self._tests_tensor(test, test.args[0].value.value):  # ``torch.is_tensor(x)``
                    self._guard_types[branch] = frozenset({"Tensor"})
                    known.setdefault(test.args[0].value.value, []).append(branch)
        return known

    def hands_back_containers(self, func: cst.FunctionDef) -> bool:
        """``func`` returns a parameter as it came after tests of it for a tensor only (``if
        isinstance(h, torch.Tensor): return h.detach()``, then ``return h``): a tuple or list of
        tensors (an LSTM's ``(h, c)``) comes back with its graph. A test naming a container type
        (``type(h) in (tuple, list)``, ``isinstance(h, dict)``) handles those."""
        params = parameter_names(func)
        for ret in self.scopes.scope_nodes(func, cst.Return):
            if not (isinstance(ret.value, cst.Name) and ret.value.value in params):
                continue
            spelled: set[str] = set()
            for branch in self.scopes.scope_nodes(func, cst.If):
                if self.tree.before(branch, ret) and not self.tree.contains(branch, ret):
                    names = {n.value for n in self.tree.descendants(branch.test, cst.Name)}
                    if ret.value.value in names:
                        spelled |= names
            if spelled & {"Tensor", "is_tensor"} and not spelled & _CONTAINER_TYPES:
                return True
        return False

    def _past_tensor_return(self, name: str, at: cst.CSTNode) -> bool:
        """``at`` follows ``if torch.is_tensor(name): return ...`` in a block that holds it: ``name``
        is no tensor there (it may still be a container of them)."""
        scope = self.scopes.scope_of(at)
        return isinstance(scope, cst.FunctionDef) and any(
            "Tensor" in self._guard_types[guard] and self.tree.before(guard, at) and not self.tree.contains(guard, at)
            and self.tree.contains(self.tree.parent[guard], at) for guard in self._early_return_guards(scope).get(name, ()))

    def _moved_to_host_in_place(self, scope) -> dict[str, list[cst.Expr]]:
        """Statements ``model.cpu()`` / ``model.to("cpu")`` of ``scope`` whose result is dropped, by
        name: a tensor's ``.to`` returns a copy, so code that drops it moves a module, in place,
        and the name holds nothing on the device after it."""
        known = self._host_moves.get(scope)
        if known is None:
            known = self._host_moves[scope] = {}
            for statement in self.scopes.scope_nodes(scope, cst.Expr):
                call = statement.value
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                        isinstance(call.func.value, cst.Name) and _moves_to_host(call):
                    known.setdefault(call.func.value.value, []).append(statement)
        return known

    def _items_detached_before(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """A statement before ``at``, in a block that holds it, hands ``expr`` to a function of the
        file that replaces each of its items by a detached copy (``self.detach_all(self.batch_loss)``
        with ``raw[mode][key] = value.detach()`` for every item): no item holds a graph after it."""
        spelled = dotted_name(expr)
        return spelled is not None and any(
            self.tree.before(statement, at) and self.tree.contains(self.tree.parent[self.tree.statement_of(statement)], at)
            for statement in self._detaching_statements(self.scopes.scope_of(at)).get(spelled, ()))

    def _detaching_statements(self, scope) -> dict[str, list[cst.Expr]]:
        known = self._detaching_calls.get(scope)
        if known is None:
            known = self._detaching_calls[scope] = {}
            for statement in self.scopes.scope_nodes(scope, cst.Expr):
                call = statement.value
                callee = self.calls.callee(call) if isinstance(call, cst.Call) else None
                if callee is None or not isinstance(callee.function, cst.FunctionDef):
                    continue
                position = self._detached_parameter(callee.function)
                index = position - callee.skipped if position is not None else -1
                if 0 <= index < len(call.args) and call.args[index].keyword is None and \
                        (spelled := dotted_name(call.args[index].value)) is not None:
                    known.setdefault(spelled, []).append(statement)
        return known

    def _detached_parameter(self, function: cst.FunctionDef) -> Optional[int]:
        """The position of the parameter whose items ``function`` replaces, every one it writes,
        by a detached copy (``raw[mode][key] = value.detach()``), if it writes any; else None."""
        if function in self._item_detachers:
            return self._item_detachers[function]
        params = [p.name.value for p in function.params.params]
        found: Optional[int] = None
        for assign in self.scopes.scope_nodes(function, cst.Assign):
            root, depth = _subscripted(assign.targets[0].target)
            if not depth or root not in params:
                continue
            if len(assign.targets) > 1 or "detach" not in dotted_chain_methods(assign.value) or \
                    found not in (None, params.index(root)):
                found = None
                break
            found = params.index(root)
        self._item_detachers[function] = found
        return found

    def _tensor_guard(self, node: cst.CSTNode, name: str) -> Optional[cst.If]:
        """The ``if isinstance(name, torch.Tensor):`` (or ``if torch.is_tensor(name):``) whose
        body holds the binding ``node``."""
        for ancestor in self.tree.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return None
            if isinstance(ancestor, cst.If) and self.tree.contains(ancestor.body, node) and \
                    self._tests_tensor(ancestor.test, name):
                return ancestor
        return None

    def _tested_as_no_tensor(self, name: str, at: cst.CSTNode) -> bool:
        """``at`` is in the ``else`` of ``if isinstance(name, torch.Tensor):`` (or in the body of
        ``if not isinstance(...)``, or of ``if isinstance(name, (int, float)):``) of its function:
        ``name`` is no tensor there (a logger's ``append(value.item())`` for tensors,
        ``append(value)`` for the rest)."""
        for ancestor in self.tree.ancestors(at):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if type(ancestor) is not cst.If:
                continue
            # (a test alone: where ``isinstance(x, torch.Tensor) and x.dim() == 0`` fails, x may be one)
            test = ancestor.test
            if ancestor.orelse is not None and self.tree.contains(ancestor.orelse, at) and \
                    not isinstance(test, cst.BooleanOperation) and self._tests_tensor(test, name):
                return True
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and \
                    self.tree.contains(ancestor.body, at) and \
                    not isinstance(test.expression, cst.BooleanOperation) and self._tests_tensor(test.expression, name):
                return True
            tested = self._isinstance_test(test)
            if tested is not None and tested[0] == name and self.tree.contains(ancestor.body, at) and \
                    self._spelled_types(tested[1]) <= _NUMBER_TYPES:
                return True
        return False

    def _tests_tensor(self, test: cst.BaseExpression, name: str) -> bool:
        """``isinstance(name, torch.Tensor)``, ``torch.is_tensor(name)`` or ``hasattr(name,
        "detach")``, alone or as one of the conditions of an ``and`` (``name is not None and
        hasattr(name, "detach")``): true whenever ``name`` is a tensor."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._tests_tensor(test.left, name) or self._tests_tensor(test.right, name)
        tested = self._isinstance_test(test)
        if tested is not None:
            return tested[0] == name and "Tensor" in self._spelled_types(tested[1])
        if not (isinstance(test, cst.Call) and test.args and isinstance(test.args[0].value, cst.Name)
                and test.args[0].value.value == name):
            return False
        if self.imports.qualify(test.func) == "torch.is_tensor":
            return True
        return dotted_name(test.func) == "hasattr" and len(test.args) == 2 and \
            isinstance(test.args[1].value, cst.SimpleString) and test.args[1].value.evaluated_value in _TENSOR_ONLY_MEMBERS

    def _isinstance_test(self, test: cst.BaseExpression) -> Optional[tuple[str, list[cst.BaseExpression]]]:
        """For ``isinstance(x, types)``: ``x`` spelled (a name or an attribute chain) and the
        classes ``types`` names (one, or each of a tuple); else None."""
        if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance" and len(test.args) == 2):
            return None
        tested, types = dotted_name(test.args[0].value), test.args[1].value
        if tested is None:
            return None
        return tested, [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]

    def _spelled_types(self, classes: list[cst.BaseExpression]) -> frozenset[str]:
        """Every name spelled in ``classes`` (``torch.Tensor`` gives ``torch`` and ``Tensor``)."""
        return frozenset(n.value for c in classes for n in self.tree.descendants(c, cst.Name))

    def _appended_to(self, name: str, scope) -> list[Value]:
        """What ``scope`` appends (``append``, ``extend``'s elements, ``insert``) to the list
        ``name``."""
        found = []
        for call in self._list_growth(scope).get(name, ()):
            if not call.args:
                continue
            added = self.value(call.args[-1].value, call)
            found.append(added.any_element() if call.func.attr.value == "extend" else added)
        return found

    def _with_items_rewritten(self, value: Value, name: str, bound_at: cst.CSTNode, at: cst.CSTNode) -> Value:
        """``out["loss"] = out["loss"].detach()`` (or a new key) between the binding and ``at``, in a
        block of statements that holds ``at``: the field holds the new value from there on; after
        ``out.pop("dist")`` (or ``del out["dist"]``) it holds nothing."""
        fields = dict(value.fields or ())
        element = value.element
        changed = False
        for write in self._item_writes(self.scopes.scope_of(at)).get(name, ()):
            if isinstance(write, cst.AugAssign):
                if self.tree.before(bound_at, write) and self.tree.before(write, at):
                    added = self.value(write.value, write)
                    if added.graph:  # (what the item held stays in it, with this value's graph)
                        element = _with_graph_of(element, added, _subscripted(write.target)[1])
                        changed = True
                continue
            if value.fields is None:
                continue  # (a comprehension's keys: what a write replaces or removes is unknown)
            every_item = isinstance(write, cst.Assign) and self._rewrites_every_item(write, name)
            # (a loop rewriting every item has done so once the loop has run)
            statement = every_item or self.tree.statement_of(write)
            block = self.tree.parent.get(statement)
            if not (self.tree.before(bound_at, write) and self.tree.before(write, at)):
                continue
            if block is None or not self.tree.contains(block, at):
                # Only a write in a block that holds ``at``, before it, surely happened; one in a
                # loop or a branch may have (``logs[name] = loss`` for each loss function): an item
                # may hold what it wrote, and nothing it replaced or removed is surely gone.
                if isinstance(write, cst.Assign):
                    element = join([element or NOTHING, self.value(write.value, write)])
                    changed = True
                continue
            if isinstance(write, cst.Assign):
                key = self.scopes.key_of(write.targets[0].target)
                if isinstance(key, str):  # (a new key too: ``outputs["targets"] = y``)
                    fields[key] = self.value(write.value, write)
                elif every_item:  # ``for k, v in d.items(): d[k] = v.item()``
                    fields = {}
                    element = self.value(write.value, write)
                else:  # ``metrics[f"{prefix}loss"] = loss``: some item holds it
                    element = join([element or NOTHING, self.value(write.value, write)])
                changed = True
            else:
                key = literal_key(write.args[0].value) if isinstance(write, cst.Call) else subscript_key(write.target)
                if isinstance(key, str) and fields.pop(key, None) is not None:
                    changed = True
        if not changed:
            return value
        return _combine(list(fields.values()) + ([element] if element else []), kind=value.kind,
                        fields=tuple(fields.items()) if value.fields is not None else None, element=element,
                        cls=value.cls)  # (why: a field's still there)

    def _rewrites_every_item(self, write: cst.Assign, name: str) -> Optional[cst.For]:
        """The loop ``for k, v in d.items():`` (or ``for k in d`` / ``d.keys()``) whose body
        does ``d[k] = ...`` with its own key: every item is replaced; else None."""
        key = write.targets[0].target.slice[0].slice.value
        loop = next((a for a in self.tree.ancestors(write) if type(a) is cst.For), None)
        if loop is None or not isinstance(key, cst.Name):
            return None
        iterated = loop.iter
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Attribute) and \
                iterated.func.attr.value in ("items", "keys") and not iterated.args:
            iterated = iterated.func.value
        target = loop.target.elements[0].value if isinstance(loop.target, cst.Tuple) and loop.target.elements \
            else loop.target
        rewrites = dotted_name(iterated) == name and isinstance(target, cst.Name) and target.value == key.value
        return loop if rewrites else None

    def _item_writes(self, scope) -> dict[str, list[cst.CSTNode]]:
        """By name, what ``scope`` does to the items of ``name`` statement by statement:
        ``name["key"] = value`` assignments, ``name[k1][k2] += value`` additions,
        ``name.pop("key")`` calls, ``del name["key"]``."""
        known = self._writes.get(scope)
        if known is None:
            known = {}
            for assign in self.scopes.scope_nodes(scope, cst.Assign):
                target = assign.targets[0].target if len(assign.targets) == 1 else None
                if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and \
                        len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                    known.setdefault(target.value.value, []).append(assign)
            for augmented in self.scopes.scope_nodes(scope, cst.AugAssign):
                root, depth = _subscripted(augmented.target)  # ``losses[mode]["cat"] += ce``: an item grows a graph
                if depth and root is not None:
                    known.setdefault(root, []).append(augmented)
            for expr in self.scopes.scope_nodes(scope, cst.Expr):
                call = expr.value
                if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "pop" \
                        and isinstance(call.func.value, cst.Name) and len(call.args) == 1:
                    known.setdefault(call.func.value.value, []).append(call)
            for delete in self.scopes.scope_nodes(scope, cst.Del):
                for target in deleted(delete):
                    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1:
                        known.setdefault(target.value.value, []).append(delete)
            for writes in known.values():
                writes.sort(key=self.tree.start.__getitem__)
            self._writes[scope] = known
        return known

    def _list_growth(self, scope) -> dict[str, list[cst.Call]]:
        known = self._growth.get(scope)
        if known is None:
            known = {}
            for call in self.scopes.scope_nodes(scope, cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert") and \
                        isinstance(func.value, cst.Name):
                    known.setdefault(func.value.value, []).append(call)
            self._growth[scope] = known
        return known

    def _used_as_tensor(self, scope) -> set[str]:
        """Names the code of ``scope`` uses in ways only a tensor allows: a tensor method or
        attribute (``out.argmax(1)``, ``feats.cpu()``: a tuple, a dict or a ``ModelOutput`` has
        none), arithmetic other than ``+``/``*`` (``out - y``), or an input of a torch loss or
        tensor function (``criterion(out, y)``, ``F.softmax(out)``). If the code runs, those are
        tensors (a module or a Python number never holds a graph, so where the value may hold one
        it is a tensor)."""
        known = self._tensor_uses.get(scope)
        if known is not None:
            return known
        names: set[str] = set()
        takes: dict[cst.Call, bool] = {}  # (a call with several named arguments is judged once)
        for node in self.scopes.scope_nodes(scope, cst.Name):
            parent = self.tree.parent.get(node)
            parent_type = type(parent)  # (``isinstance`` on LibCST's ABC classes is slow to miss)
            if parent_type is cst.Attribute and parent.value is node:
                if parent.attr.value in _TENSOR_ONLY_MEMBERS:
                    names.add(node.value)
            elif parent_type is cst.BinaryOperation and type(parent.operator).__name__ in TENSOR_OPERATORS:
                names.add(node.value)
            elif parent_type is cst.Arg and parent.keyword is None and parent.value is node:
                call = self.tree.parent.get(parent)
                if isinstance(call, cst.Call):
                    known = takes.get(call)
                    if known is None:
                        known = takes[call] = self._takes_tensors(call)
                    if known:
                        names.add(node.value)
        self._tensor_uses[scope] = names
        return names

    def differentiated_inputs(self, call: cst.Call) -> set[str]:
        """What ``torch.autograd.grad(outputs, inputs)`` differentiates with respect to: the names
        and attribute chains (``x``, ``self.w``) in ``inputs``, by position or keyword; none for
        any other call."""
        if not call.args or self.imports.qualify(call.func) != "torch.autograd.grad":
            return set()
        inputs = keyword_value(call, "inputs")
        if inputs is None and len(call.args) > 1 and call.args[1].keyword is None:
            inputs = call.args[1].value
        found: set[str] = set()
        stack: list[cst.CSTNode] = [inputs] if inputs is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.Name, cst.Attribute)) and (spelled := dotted_name(node)) is not None:
                found.add(spelled)
            stack.extend(node.children)
        return found

    def _differentiated_in(self, scope) -> set[str]:
        known = self._grad_inputs.get(scope)
        if known is None:
            known = self._grad_inputs[scope] = set().union(
                *(self.differentiated_inputs(c) for c in self.scopes.scope_nodes(scope, cst.Call)))
        return known

    def _used_as_mapping(self, scope, depth: int = 0) -> set[str]:
        """Names ``scope`` reads by key (``out["logits"]``, ``out[self.output_key]``, ``.items()``),
        or hands to a function of the file that does so with that parameter: a dict, even where a
        loss function also takes it (``loss_fn(batch, outputs)`` of a template whose losses and
        metrics read their inputs by key)."""
        known = self._mapping_uses.get(scope)
        if known is not None:
            return known
        self._mapping_uses[scope] = set()  # recursion guard
        names: set[str] = set()
        for node in self.scopes.scope_nodes(scope, cst.Subscript):
            if isinstance(node.value, cst.Name) and len(node.slice) == 1 and \
                    isinstance(node.slice[0].slice, cst.Index) and _is_key(node.slice[0].slice.value):
                names.add(node.value.value)
        for call in self.scopes.scope_nodes(scope, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("items", "keys", "values") and \
                    isinstance(func.value, cst.Name) and not call.args:
                names.add(func.value.value)
            callee = self.calls.callee(call) if depth < 3 else None
            if callee is None or not isinstance(callee.function, cst.FunctionDef):
                continue
            by_key = self._used_as_mapping(callee.function, depth + 1)
            for param, given in self.calls.arguments(call, callee).items():
                if param in by_key:
                    names.update(expr.value for expr, _ in given if isinstance(expr, cst.Name))
        self._mapping_uses[scope] = names
        return names

    def _returns_indices(self, expr: cst.BaseExpression) -> bool:
        """``expr`` gives ``(values, indices)``: ``x.max(1)``, ``x.topk(k)``, ``torch.max(x, 1)``,
        ``torch.sort(x)`` (``torch.max(x)`` without a dimension gives one tensor)."""
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute) or \
                expr.func.attr.value not in _VALUES_AND_INDICES or not expr.args:
            return False
        if self.imports.qualify(expr.func) != f"torch.{expr.func.attr.value}":
            return True  # a tensor's method, given a dimension (or ``k``)
        return expr.func.attr.value not in ("max", "min", "median") or len(expr.args) > 1

    def _takes_tensors(self, call: cst.Call) -> bool:
        qualified = self.imports.qualify(call.func)
        if qualified is not None:
            function = qualified.rsplit(".", 1)[-1]
            return qualified.startswith(("torch.nn.functional.", "torch.linalg.")) or (
                qualified.startswith("torch.") and qualified.count(".") == 1 and function not in _JOINS
                and not torch_gives_no_tensor(function) and function not in _FACTORIES)
        return self.calls.is_forward_pass(call) and self.calls.is_loss_function_call(call)

    def kind_handed_in(self, expr: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
        """The kind every caller hands in for ``expr``: a parameter the function never rebinds
        (``window`` of ``loop_body(..., window, ...)``, called with ``window = torch.zeros(n)``),
        or an attribute of ``self`` set only from such parameters (``self.window = window`` in
        ``__init__``, the object built with a tensor). None where the callers differ or none is
        known."""
        if isinstance(expr, cst.Name):
            handed = [(expr.value, self.scopes.function_of(at))]
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = self.scopes.self_class(self.scopes.function_of(at))
            assignments = self.self_assignments(cls).get(expr.attr.value, []) if cls is not None else []
            parts = [a.value if a.position is None else a.value.elements[a.position].value
                     if isinstance(a.value, (cst.Tuple, cst.List)) and a.position < len(a.value.elements) else None
                     for a in assignments]  # (``self.model, self.buffer = model, buffer``)
            handed = [(part.value, self.scopes.function_of(a.node)) for part, a in zip(parts, assignments)
                      if isinstance(part, cst.Name)]
            if not handed or len(handed) != len(assignments):
                return None
        else:
            return None
        kinds = set()
        for name, function in handed:
            param = self.scopes.sole_parameter(name, function)
            if param is None:
                return None
            kinds |= {self.value(passed, where).kind for passed, where in self.calls.passed_to(param)}
        return kinds.pop() if len(kinds) == 1 else None

    def object_classes(self, name: str, scope) -> set[str]:
        """The classes of the file whose objects one of ``name``'s bindings in ``scope`` gives it
        (``out, memory = model(x, memory)`` where the model returns a ``Memory(...)``): what
        joining those bindings' values leaves out."""
        return {value.cls for binding in self.scopes.bindings(scope).get(name, ())
                if (value := self._binding_value(binding, name)).kind == RECORD and value.cls is not None}

    def _binding_value(self, binding, name: str) -> Value:
        node = binding.node
        if isinstance(node, cst.Param):
            return self._parameter(node)
        if isinstance(node, cst.For):
            if iterates_parameters(node, name) and in_optimizer_step(self.scopes, node):
                # ``for p in group["params"]`` in a hand-written optimizer's ``step``: what it computes
                # from ``p`` outside ``no_grad`` has a graph (``d_p = p.grad + wd * p``)
                return Value(kind=TENSOR, leaf=True)
            return destructure(self.value(node.iter, node).any_element(), node.target, name)
        if binding.value is None:
            return UNKNOWN
        value = self.value(binding.value, node)
        if binding.index is not None:
            if value.kind == TENSOR and isinstance(binding.value, cst.Call) and \
                    self.calls.is_loss_function_call(binding.value) and self.calls.callee(binding.value) is None:
                if self._defines_loss_class:
                    # ``self.criterion(model, sample)``, unresolved, in a file whose own loss
                    # classes return as many values: what those return at that position
                    returned = self._classes_return(_unpacked_length(node), losses=True, call=binding.value)
                    return returned.item(binding.index) if returned is not None else value.item(binding.index)
                # ``loss, loss_items = compute_loss(pred, y)`` of another module: by convention the
                # loss comes first and what follows is for logging; what that holds is not known here,
                # unless it is named as a loss term too (``total, consistency_loss, entropy_loss``).
                return value if binding.index == 0 or _LOSS_NAME.search(name.rstrip("_")) else UNKNOWN
            if binding.index == 1 and self._returns_indices(binding.value):  # ``_, preds = torch.max(logits, 1)``
                return _indices(value)
            return value.item(binding.index)
        if binding.augmented:  # ``t += v``: the new value is computed from the old one and ``v``
            # (a sum of losses is a loss: ``total += criterion(out, y)``, one number on the device)
            summed_loss = value.loss and isinstance(node, cst.AugAssign) and \
                isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign))
            return self._computed(value.derived(kind=TENSOR if value.kind == TENSOR else
                                                NUMBER if value.kind == NUMBER else None, scalar=value.scalar,
                                                loss=summed_loss), node)
        return value

    @cached_property
    def _defines_loss_class(self) -> bool:
        """The file has a loss class of its own (``MaskedLmCriterion``), which an unresolved
        ``self.criterion(...)`` may well be: then its tuple is not guessed by convention."""
        return any(_is_loss_class_name(name) for name in self.scopes.classes_by_name)

    def _classes_return(self, length: Optional[int], losses: bool, call: cst.Call) -> Optional[Value]:
        """What the ``forward`` of every loss class (``losses``) or every other module class of
        the file returns, joined, when each returns a tuple of ``length`` values (their
        parameters' contributions those of ``call``) and takes the arguments of ``call``; else None."""
        if length is None:
            return None
        returned = []
        for name, cls in self.scopes.classes_by_name.items():
            if _is_loss_class_name(name) != losses or not losses and not self.scopes.is_torch_module_class(cls):
                continue
            forward = self.calls.method_of(cls, "forward")
            if forward is not None and not _takes(forward, call):
                return None  # (``model(inputs)`` is not the file's ``Memory`` whose forward takes three)
            value = self.summary(forward).returns if forward is not None else None
            if value is None or value.elements is None or len(value.elements) != length:
                return None
            returned.append(_substitute(value, self._argument_values(call, Callee(forward, skipped=1))))
        return join(returned) if returned else None

    def _differentiated(self, name: str, at: cst.CSTNode, bindings) -> bool:
        """A name some backward pass differentiates holds a graph, when what reaches here is
        opaque (a parameter, a call of something unknown, arithmetic of those: ``loss = loss -
        beta * entropy`` over an unknown model's outputs) rather than known to be detached."""
        scope = self.scopes.scope_of(at)
        if name not in self.calls.backwarded_names(scope) and name not in self._gathered_for_backward(scope) and \
                not self._sole_graph_operand(name, scope) and not self._model_output_differentiated(name, scope, bindings):
            return False
        return all(b.value is None and not self._loaded(b.node) or
                   (isinstance(b.value, (cst.Call, cst.BinaryOperation, cst.UnaryOperation))
                    and not (value := self.value(b.value, b.node)).detached and value.kind != NUMBER)
                   for b in bindings)

    def _sole_graph_operand(self, name: str, scope) -> bool:
        """``name`` is the one name of a differentiated loss's expression that can give it its
        graph, every other being surely without one (``policy_loss = (-log_probs * returns).mean()``
        with ``returns`` built by ``torch.tensor``): it holds a graph, however opaque what it was
        made from (a list kept on a parameter: ``torch.stack(model.saved_log_probs)``)."""
        operands = self._loss_operands.get(scope)
        if operands is None:
            backwarded, bindings = self.calls.backwarded_names(scope), self.scopes.bindings(scope)
            operands = self._loss_operands[scope] = [
                (assign, {n for n in self.calls.names_keeping_graph(assign.value) if n in bindings})
                for assign in self.scopes.scope_nodes(scope, cst.Assign)
                if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                and assign.targets[0].target.value in backwarded and self._tensor_arithmetic(assign.value)]
            # ``total_loss = 0`` then ``total_loss += loss`` per view: what is added is its graph
            operands += [
                (update, {n for n in self.calls.names_keeping_graph(update.value) if n in bindings} - {total})
                for update in self.scopes.scope_nodes(scope, cst.AugAssign)
                if isinstance(update.target, cst.Name) and (total := update.target.value) in backwarded
                and isinstance(update.operator, cst.AddAssign) and self._tensor_arithmetic(update.value)
                and all(isinstance(b.node, cst.AugAssign) or isinstance(b.value, (cst.Integer, cst.Float))
                        for b in bindings.get(total, ()))]
        return any(name in names and all(self._surely_without_graph(other, assign) for other in names - {name})
                   for assign, names in operands)

    def _model_output_differentiated(self, name: str, scope, bindings) -> bool:
        """What a model's method gave with grad on, that a backward of ``scope`` differentiates
        through (``actions, log_probs = self.actor.sample_normal(state)`` ... ``actor_loss =
        (log_probs - q).mean(); actor_loss.backward()``): it holds the model's graph."""
        if not bindings or name not in self.calls.names_feeding_backward(scope):
            return False
        # (in the iteration that differentiates it: not ``hidden = rnn.initial_state()`` before the loop)
        backward_loops = self._backward_loops.get(scope)
        if backward_loops is None:
            backward_loops = self._backward_loops[scope] = {
                next(iter(self.scopes.loops_around(c)), None) for c in self.scopes.scope_nodes(scope, cst.Call)
                if self.calls.backward_roots(c)}
        return all(
            isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Attribute)
            and is_model_name(terminal_name(b.value.func.value)) and not self.grad.is_disabled(b.node)
            and next(iter(self.scopes.loops_around(b.node)), None) in backward_loops for b in bindings)

    def _tensor_arithmetic(self, expr: cst.BaseExpression) -> bool:
        """``expr`` only computes with its operands (operators, reductions, elementwise maths,
        ``torch`` functions): nothing in it, a model or a remote call, makes a graph of its own."""
        for call in self.tree.descendants(expr, cst.Call):
            qualified = self.imports.qualify(call.func) or ""
            if qualified.startswith("torch.") and not qualified.startswith("torch.nn.") or \
                    isinstance(call.func, cst.Attribute) and call.func.attr.value in _TENSOR_MATHS:
                continue
            return False
        return True

    def _surely_without_graph(self, name: str, at: cst.CSTNode) -> bool:
        reaching = self.scopes.reaching_bindings(name, at)
        return bool(reaching) and all(
            b.value is not None and ((value := self.value(b.value, b.node)).detached or value.kind in (NUMBER, OTHER))
            for b in reaching)

    def _gathered_for_backward(self, scope) -> set[str]:
        """Names appended to a list that a backward pass of ``scope`` differentiates once joined
        (``loss_all.append(loss)`` ... ``torch.stack(loss_all).sum().backward()``, also through one
        binding: ``loss_q = torch.stack(loss_all).sum(0); loss_q.backward()``)."""
        known = self._gathered.get(scope)
        if known is not None:
            return known
        growth = self._list_growth(scope)
        backwarded = self.calls.backwarded_names(scope)
        lists = {name for name in backwarded if name in growth}
        if growth and backwarded:
            for assign in self.scopes.scope_nodes(scope, cst.Assign):
                if any(isinstance(t.target, cst.Name) and t.target.value in backwarded for t in assign.targets):
                    lists |= {arg.value.value for call in self.tree.descendants(assign.value, cst.Call)
                              if self.imports.qualify(call.func) in JOIN_FUNCTIONS for arg in call.args
                              if isinstance(arg.value, cst.Name) and arg.value.value in growth}
        known = self._gathered[scope] = {call.args[-1].value.value for name in lists for call in growth[name]
                                         if call.args and isinstance(call.args[-1].value, cst.Name)}
        return known

    def _loaded(self, node: cst.CSTNode) -> bool:
        """A target of ``for x, y in loader:``: data, the targets of a loss, never a graph."""
        return isinstance(node, cst.For) and any(LOADER_ITERABLE.search(i) for i in iterable_identifiers(node.iter))

    def _indexed_in_backward(self, name: str, scope) -> bool:
        """``name`` reaches the backward passes of ``scope`` only through an item or attribute
        (``metrics["loss"].backward()``, ``out.loss.backward()``): a container, not the tensor."""
        uses = [n for call in self.scopes.scope_nodes(scope, cst.Call) for root in self.calls.backward_roots(call)
                for n in [*self.tree.descendants(root, cst.Name), *([root] if isinstance(root, cst.Name) else [])]
                if n.value == name]
        return bool(uses) and all(
            isinstance(parent := self.tree.parent.get(n), (cst.Subscript, cst.Attribute)) and parent.value is n
            for n in uses)

    def _backwarded_as_scalar(self, scope) -> set[str]:
        """Names ``n`` of ``n.backward()`` / ``scaler.scale(n).backward()`` with no gradient
        argument (PyTorch raises unless ``n`` has one element), and of ``accelerator.backward(n)``
        / ``fabric.backward(n)`` / ``self.manual_backward(n)``, which call ``n.backward()``.
        Computed once per scope: it is asked for every name read there."""
        names = self._scalar_losses.get(scope)
        if names is not None:
            return names
        names = self._scalar_losses[scope] = set()
        for call in self.scopes.scope_nodes(scope, cst.Call):
            func = call.func
            if not isinstance(func, cst.Attribute):
                continue
            receiver = func.value
            if func.attr.value == "manual_backward" or (
                    func.attr.value == "backward" and _FRAMEWORK_RECEIVER.search(terminal_name(receiver) or "")):
                root = call.args[0].value if call.args and call.args[0].keyword is None else None
                rest = call.args[1:]
            elif func.attr.value == "backward":
                root, rest = receiver, call.args
                if isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and \
                        root.func.attr.value == "scale" and len(root.args) == 1:
                    root = root.args[0].value
            else:
                continue
            if isinstance(root, cst.Name) and not any(a.keyword is None or a.keyword.value == "gradient" for a in rest):
                names.add(root.value)
        return names

    def is_scalar_loss_name(self, name: str, scope) -> bool:
        return name in self._backwarded_as_scalar(scope)

    def _comprehension_target(self, expr: cst.Name) -> Optional[tuple[cst.CompFor, cst.BaseExpression]]:
        """The comprehension clause whose target binds ``expr`` (``x`` in ``[f(x) for x in xs]``)."""
        child: cst.CSTNode = expr
        for ancestor in self.tree.ancestors(expr):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
                return None
            if isinstance(ancestor, cst.CompFor) and child is not ancestor.iter:
                if _binds(ancestor.target, expr.value):
                    return ancestor, ancestor.target
            if isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)) and \
                    child is not ancestor.for_in:
                clause = ancestor.for_in
                found = None
                while clause is not None:
                    if _binds(clause.target, expr.value):
                        found = clause
                    clause = clause.inner_for_in
                if found is not None:
                    return found, found.target
            child = ancestor
        return None

    def _lambda_parameter(self, expr: cst.Name) -> Optional[cst.Lambda]:
        """The lambda whose parameter ``expr`` is, if any."""
        for ancestor in self.tree.ancestors(expr):
            if type(ancestor) is cst.Lambda:
                params = ancestor.params
                if any(p.name.value == expr.value for p in (*params.posonly_params, *params.params,
                                                             *params.kwonly_params)):
                    return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return None
        return None

    def _hook_argument(self, function: "Function", name: str) -> Optional[Value]:
        """A forward hook's ``input`` or ``output`` parameter: the module's activations, holding
        the graph of the forward pass that called the hook (on the module's device)."""
        registration = self.calls.forward_hooks.get(function)
        if registration is None:
            return None
        params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
        if isinstance(function, cst.FunctionDef) and self.scopes.class_of(function) is not None:
            params = params[1:]  # a bound method: ``self`` is not the hook's
        carrying = params[1:3] if registration.func.attr.value == "register_forward_hook" else params[1:2]
        if name not in carrying:
            return None
        if self._hooked_forwards_disabled(registration):
            return Value(device=True)
        return Value(graph=True, device=True, why=((function, f"`{name}` is a forward hook's activation"),))

    def _hooked_forwards_disabled(self, registration: cst.Call) -> bool:
        """The hook runs only where grad is off: registered under ``no_grad``, or every call of
        the hooked model in the file (``model`` of ``model.layer4.register_forward_hook``) is."""
        if self.grad.is_disabled(registration):
            return True
        root = registration.func.value
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        runs = self.calls.calls_spelled(root.value, method=False)
        if bool(runs) and all(self.grad.is_disabled(c) for c in runs):
            return True
        if not runs and self._every_forward_pass_disabled:
            return True  # (a module picked out of a list, ``layers[idx]``: the file runs models only with grad off)
        return self._removed_after_disabled_runs(registration)

    @cached_property
    def _every_forward_pass_disabled(self) -> bool:
        """The file runs models (or losses), and only where grad is off."""
        forwards = [call for call in self.tree.nodes(cst.Call) if self.calls.is_forward_pass(call)]
        return bool(forwards) and all(self.grad.is_disabled(call) for call in forwards)

    def _removed_after_disabled_runs(self, registration: cst.Call) -> bool:
        """Registered, models run only with grad off (``calibrate(model, loader)``, whose
        forward passes are under ``no_grad``), then removed (``handle.remove()``), all in one
        function: whatever the hook keeps, no forward with grad on ever called it."""
        func = self.scopes.function_of(registration)
        if func is None or isinstance(self.tree.parent.get(registration), cst.Expr):
            return False  # (a handle thrown away is never removed)
        calls = [c for c in self.scopes.scope_nodes(func, cst.Call) if self.tree.before(registration, c)]
        removal = next((c for c in calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "remove"
                        and not c.args), None)
        if removal is None:
            return False
        runs = [(c, forwards) for c in calls if self.tree.before(c, removal)
                and (forwards := self._forward_passes_in(c)) is not None]
        return bool(runs) and all(self.grad.is_disabled(c) or all(self.grad.is_disabled(f) for f in forwards)
                                  for c, forwards in runs)

    def _forward_passes_in(self, call: cst.Call) -> Optional[list[cst.Call]]:
        """The forward passes ``call`` runs: itself, or those of the function of the file it
        calls; None where it runs none."""
        if self.calls.is_forward_pass(call):
            return [call]
        callee = self.calls.callee(call)
        if callee is None or not isinstance(callee.function, cst.FunctionDef):
            return None
        inside = [c for c in self.scopes.scope_nodes(callee.function, cst.Call) if self.calls.is_forward_pass(c)]
        return inside or None

    def _parameter(self, param: cst.Param) -> Value:
        name = param.name.value
        func = self.scopes.function_of(param)
        kind = None
        annotation = param.annotation.annotation if param.annotation is not None else None
        if annotation is not None and self.annotation_has_tensor(annotation):
            kind = TENSOR if not _is_container_annotation(annotation) else None  # ``dict[str, Tensor]`` is no tensor
        elif isinstance(annotation, cst.Name) and annotation.value in ("int", "float", "bool"):
            kind = NUMBER
        elif annotation is not None and (self.imports.qualify(annotation) or "").startswith("torch.nn.") and \
                (self.imports.qualify(annotation) or "").rsplit(".", 1)[-1] in ("Module", "Sequential", "ModuleList"):
            kind = MODULE  # ``model: nn.Module``
        if func is not None:
            hooked = self._hook_argument(func, name)
            if hooked is not None:
                return replace(hooked, alias=name, params=frozenset({name}))
        device = func is not None and (self._lightning_batch(func, name) or self._lightning_outputs(func, name))
        return Value(alias=name, params=frozenset({name}), kind=kind, device=device,
                     loss="loss" in name.lower().split("_"))

    @staticmethod
    def _lightning_outputs(func: cst.FunctionDef, name: str) -> bool:
        """``outputs`` of a Lightning ``on_*_batch_end`` hook: what the step returned, on the
        module's device."""
        method = func.name.value
        return name == "outputs" and method.startswith("on_") and method.endswith("_batch_end")

    def _lightning_batch(self, func: cst.FunctionDef, name: str) -> bool:
        """Lightning moves ``batch`` to the module's device before calling a step method."""
        if not self.scopes.is_per_step_method(func) or not self.scopes.is_lightning_module(self.scopes.class_of(func)):
            return False
        params = func.params.params
        return len(params) >= 2 and params[1].name.value == name

    # -- calls -------------------------------------------------------------------------------
    def _call(self, call: cst.Call, at: cst.CSTNode) -> Value:
        func = call.func
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return self._library_call(qualified, call, at)
        if isinstance(func, cst.Attribute):
            known = self._known_method(func.attr.value, func, call, at)
            if known is not None:
                return known
            if func.attr.value == "apply" and self._is_autograd_function(func.value):
                # ``SpikeFn.apply(mem)``: what its ``forward`` returns joins its inputs' graphs
                return _combine([self.value(a.value, at) for a in call.args], kind=TENSOR)
        callee = self.calls.callee(call)
        if callee is not None:
            return self._local_call(callee, call, at)
        candidates = self.calls.candidates(call)
        if candidates:  # ``metric.process(state)`` of any of the file's metric classes
            return join([self._local_call(c, call, at) for c in candidates])
        if isinstance(func, cst.Call):  # ``nn.CrossEntropyLoss()(out, y)``
            if self.calls.is_forward_pass(call):
                return self._forward(call, at)
            return UNKNOWN
        module = self.value(func, at)
        if module.kind == MODULE and (module.cls or "").rsplit(".", 1)[-1] in PARAMETER_FREE_MODULES:
            # ``softmax = nn.Softmax(-1)``; ``softmax(logits)``: a tensor operation on its input
            return _combine([self.value(a.value, at) for a in call.args], kind=TENSOR)
        if self.calls.is_forward_pass(call) or module.kind == MODULE:
            return self._forward(call, at)
        if is_class_name(terminal_name(func) or ""):
            if MODULE_NAME.search(terminal_name(func) or ""):
                return Value(kind=MODULE)  # ``ResNet18()``, ``Generator()`` from another file
            return self._record(call, at)
        if isinstance(func, cst.Name):
            if self.kind_handed_in(func, at) == MODULE:
                # ``cell(x, hidden)`` in ``_apply_layer(self, cell, ...)``, every caller handing
                # in a layer (``for cell in self.cells``): a forward pass
                return self._forward(call, at)
            return self._builtin(func.value, call, at)
        if isinstance(func, cst.Attribute):
            return self._method(func.attr.value, self.value(func.value, at), func, call, at)
        return UNKNOWN

    def _forward(self, call: cst.Call, at: cst.CSTNode) -> Value:
        """A forward pass: a model's output holds the graph of its parameters; a loss function's
        the graph of its inputs (unless every input is surely detached)."""
        module = self.value(call.func, at) if isinstance(call.func, (cst.Name, cst.Attribute)) else UNKNOWN
        forward = self._own_forward(module)
        if forward is not None and self.summary(forward).returns.elements is not None:
            # ``loss, rc, kl = elbo(mu, logsig, out, x)`` of a module class of the file whose forward
            # returns a tuple (``rc + kl, rc.item(), kl.item()``): what each position holds
            return self._local_call(Callee(forward, skipped=1), call, at)
        why = ((call, f"graph made by `{_spelled(call)}(...)`"),)
        if self.calls.is_loss_function_call(call):
            inputs = [self.value(a.value, at) for a in call.args]
            reduced = _reduces(call) and (not isinstance(call.func, cst.Call) or _reduces(call.func))
            if reduced and isinstance(call.func, cst.Name):
                reduced = all(not isinstance(b.value, cst.Call) or _reduces(b.value)
                              for b in self.scopes.reaching_bindings(call.func.value, call))
            scalar = reduced and self._builds_reduced_loss(call)
            if inputs and (all(v.detached for v in inputs) or inputs[0].detached and not any(v.graph for v in inputs)):
                # (a validation loss under ``no_grad``; or one of outputs made under it, computed
                # after the block against the batch's targets, which hold no graph)
                return Value(detached=True, device=any(v.device for v in inputs), kind=TENSOR, scalar=scalar,
                             loss=reduced)
            return Value(graph=True, device=True, kind=TENSOR, scalar=scalar, loss=reduced, why=why,
                         params=frozenset().union(*(v.params for v in inputs)))
        returns_one_tensor = module.kind == MODULE and (module.cls or "").rsplit(".", 1)[-1] in _ONE_TENSOR_MODULES
        assign = self.tree.parent.get(call)
        if module.kind != MODULE and isinstance(assign, cst.Assign) and assign.value is call and \
                self.calls.callee(call) is None:
            # ``out, M, z = model(x, M, z)`` with a model passed in, in a file whose own model
            # classes each return as many values: what those return
            returned = self._classes_return(_unpacked_length(assign), losses=False, call=call)
            if returned is not None:
                return returned
        return Value(graph=True, device=not self._host_only_file and not self._built_on_cpu(call.func, module),
                     why=why, kind=TENSOR if returns_one_tensor else None)

    def _own_forward(self, module: Value) -> Optional[cst.FunctionDef]:
        cls = self.scopes.classes_by_name.get(module.cls or "") if module.kind == MODULE else None
        return self.calls.method_of(cls, "forward") if cls is not None else None

    def _built_on_cpu(self, func: cst.BaseExpression, module: Value) -> bool:
        """A module built here from literals and other modules built here
        (``encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 4))``, not a wrapper
        of a module made elsewhere: ``DistributedDataParallel(encoder)``) that nothing moves: not
        by rebinding (``.to(device)`` would show in ``module.device``) nor in place
        (``encoder.cuda()`` as a statement of the scope)."""
        if not (isinstance(func, cst.Name) and module.kind == MODULE and not module.device):
            return False
        bindings = self.scopes.reaching_bindings(func.value, func)
        if not bindings or not all(isinstance(b.value, cst.Call) and self._built_from_scratch(b.value) for b in bindings):
            return False
        return not any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("to", "cuda") and
                       isinstance(c.func.value, cst.Name) and c.func.value.value == func.value
                       for c in self.scopes.scope_nodes(self.scopes.scope_of(func), cst.Call))

    def _built_from_scratch(self, call: cst.Call) -> bool:
        """A module constructor (through ``.eval()`` and the like) whose arguments are literals or
        constructors of the same kind."""
        call = module_itself(call)
        if not isinstance(call, cst.Call) or not self.modules.is_constructor(call):
            return False
        return all(isinstance(a.value, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)) and
                   (not isinstance(a.value, cst.Name) or a.value.value in ("True", "False", "None"))
                   or isinstance(a.value, cst.Call) and self._built_from_scratch(a.value) for a in call.args)

    def _builds_reduced_loss(self, call: cst.Call) -> bool:
        """A loss call known to return one number: a torch loss (``F.mse_loss``, an ``nn.*Loss()``
        instance, bound by name in this file), not a function merely named like one."""
        func = call.func
        if isinstance(func, cst.Call):
            return (self.imports.qualify(func.func) or "").startswith("torch.nn.")
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return qualified.startswith("torch.nn.")
        if isinstance(func, cst.Name):
            bindings = self.scopes.reaching_bindings(func.value, call)
            return len(bindings) == 1 and isinstance(bindings[0].value, cst.Call) and \
                (self.imports.qualify(bindings[0].value.func) or "").startswith("torch.nn.") and \
                (self.imports.qualify(bindings[0].value.func) or "").endswith("Loss")
        return False

    def _local_call(self, callee: Callee, call: cst.Call, at: cst.CSTNode) -> Value:
        if callee.constructs is not None:
            return self._construct(callee, call, at)
        returned = self.summary(callee.function).returns
        result = _substitute(returned, self._argument_values(call, callee))
        if returned.alias is None and isinstance(callee.function, cst.FunctionDef) and \
                self.grad.is_function_disabled(callee.function):
            return result.without_graph()  # (``@torch.no_grad()`` on it: what it computes from its inputs holds no graph)
        return result.travelled(call, f"returned by `{callee.name}()`")

    def _argument_values(self, call: cst.Call, callee: Callee) -> dict[str, Value]:
        """What ``call`` hands to each parameter of ``callee``'s function."""
        return {name: join([self.value(expr, where) for expr, where in given])
                for name, given in self.calls.arguments(call, callee).items()}

    def _construct(self, callee: Callee, call: cst.Call, at: cst.CSTNode) -> Value:
        """An object of a class of this file: a module, or a record whose attributes are what
        ``__init__`` (or the dataclass / NamedTuple fields) assign from the arguments."""
        cls = callee.constructs
        if self.scopes.is_torch_module_class(cls):
            return Value(kind=MODULE, cls=cls.name.value)
        fields: dict[str, Value] = {}
        if callee.function is not None:
            arguments = self._argument_values(call, callee)
            for attribute, assigned in self.self_assignments(cls).items():
                values = [self.assigned_value(a) for a in assigned if self.scopes.function_of(a.node) is callee.function]
                if values:
                    fields[attribute] = _substitute(join(values), arguments)
        else:  # a dataclass or NamedTuple: the class body's annotated names, in order
            names = [s.target.value for s in self._class_fields(cls)]
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            for name, expr in zip(names, positional):
                fields[name] = self.value(expr, at)
            for arg in call.args:
                if arg.keyword is not None:
                    fields[arg.keyword.value] = self.value(arg.value, at)
        values = list(fields.values())
        return Value(kind=RECORD, cls=cls.name.value, fields=tuple(fields.items()),
                     graph=any(v.graph for v in values), device=any(v.device for v in values),
                     params=frozenset().union(*(v.params for v in values)) if values else frozenset(),
                     elements=tuple(values) if callee.function is None else None,
                     why=next((v.why for v in values if v.graph), ()))

    def _record(self, call: cst.Call, at: cst.CSTNode) -> Value:
        """An object of a class this file does not define (``Transition(*args)`` of a
        ``namedtuple``, a library's record type): it holds what it is given."""
        positional = tuple(self.value(a.value, at) for a in call.args if a.keyword is None)
        fields = tuple((a.keyword.value, self.value(a.value, at)) for a in call.args if a.keyword is not None)
        parts = [*positional, *(v for _, v in fields)]
        return _combine(parts, kind=RECORD, elements=positional if not any(a.star for a in call.args) else None,
                        fields=fields or None, element=join(parts) if parts else None)

    def _class_fields(self, cls: cst.ClassDef) -> list[cst.AnnAssign]:
        return [s for line in cls.body.body if isinstance(line, cst.SimpleStatementLine)
                for s in line.body if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)]

    def _library_call(self, qualified: str, call: cst.Call, at: cst.CSTNode) -> Value:
        args = [self.value(a.value, at) for a in call.args]
        if qualified.startswith("torch."):
            return self._torch_call(qualified, call, args, at)
        if self.calls.is_loss_function_call(call):  # another package's loss (``chunked_cross_entropy``)
            return self._forward(call, at)
        if qualified in _RECORD_FACTORIES:
            fields = tuple((a.keyword.value, self.value(a.value, at)) for a in call.args if a.keyword is not None)
            return _combine([v for _, v in fields], kind=RECORD, fields=fields)
        if qualified == "collections.OrderedDict":
            return self._builtin("dict", call, at)
        if qualified == "collections.defaultdict":  # (its argument makes missing entries, it is not an entry)
            return _pack([], kind=MAPPING, fields=(), element=None)
        if qualified == "copy.deepcopy" and args:
            return args[0] if args[0].kind == MODULE else args[0].without_graph()
        if qualified == "copy.copy" and args:
            return args[0]  # a shallow copy holds what the original holds, field for field
        if qualified == "typing.cast" and len(args) == 2:
            return args[1]
        if qualified in ("collections.namedtuple", "functools.partial", "dataclasses.dataclass"):
            return OTHER_VALUE
        if qualified.startswith(_NUMERIC_LIBRARIES):
            return Value(detached=True)
        if self.modules.is_constructor(call):
            return Value(kind=MODULE)
        if is_class_name(qualified.rsplit(".", 1)[-1]):
            return self._record(call, at)  # an object of another package's class: its attributes, no graph of its own
        if _TO_HOST_VALUES.search(qualified.rsplit(".", 1)[-1]):
            return Value(detached=True)  # ``to_numpy(x)``, ``tensor2np(x)``: arrays and numbers, no graph
        # An unknown library function on tensors (``einops.rearrange(x, ...)``) keeps their graph.
        return _combine(args) if args else UNKNOWN

    def _torch_call(self, qualified: str, call: cst.Call, args: list[Value], at: cst.CSTNode) -> Value:
        namespace, _, function = qualified[len("torch."):].rpartition(".")
        if qualified.startswith("torch.nn.functional.") and self.calls.is_forward_pass(call):
            return self._forward(call, at)
        if qualified in ("torch.func.functional_call", "torch.nn.utils.stateless.functional_call"):
            # ``functional_call(net, fast_weights, (x,))``: a forward pass of ``net`` with the
            # parameters given
            return Value(graph=True, device=not self._host_only_file,
                         why=((call, f"graph made by `{_spelled(call)}(...)`"),))
        if qualified == "torch.autograd.grad":  # gradients hold a graph only with create_graph=True
            graph = _keyword_true(call, "create_graph")
            return Value(kind=SEQUENCE, graph=graph, detached=not graph, element=Value(
                kind=TENSOR, graph=graph, detached=not graph, device=any(v.device for v in args)),
                why=((call, "graph made by `torch.autograd.grad(..., create_graph=True)`"),) if graph else ())
        if function == "as_tensor" and args and args[0].kind in (TENSOR, None) and \
                keyword_value(call, "device") is None and keyword_value(call, "dtype") is None and \
                not (isinstance(call.args[0].value, cst.Name) and self._past_tensor_return(call.args[0].value.value, call)):
            return args[0]  # a tensor handed to ``torch.as_tensor`` comes back itself, graph and all
        if function in _FACTORIES:
            device = keyword_value(call, "device")
            on_device = (not self._is_host(device, at)) if device is not None else (
                function.endswith("_like") and bool(args) and args[0].device)
            return Value(kind=TENSOR, detached=True, device=on_device, scalar=function in _SCALAR_FACTORIES and
                         bool(call.args) and _number_literal(call.args[0].value))
        if qualified.startswith("torch.nn."):
            if function == "parameters_to_vector" and args:  # one flat copy of every parameter: ``cat`` of them
                return _combine([args[0].any_element(), args[0]], kind=TENSOR)
            if function == "Parameter":  # a leaf with no graph, but what is computed from it has one
                frozen = keyword_value(call, "requires_grad")  # (``requires_grad=False``: a plain tensor)
                frozen = isinstance(frozen, cst.Name) and frozen.value == "False"
                return Value(kind=TENSOR, leaf=not frozen, detached=frozen, device=bool(args) and args[0].device)
            if function.endswith("Tensor"):
                return Value(kind=TENSOR, detached=True, device=bool(args) and args[0].device)
            if function[:1].isupper():
                return Value(kind=MODULE, cls=qualified)
        if qualified.startswith("torch.optim.") and function[:1].isupper():
            return Value(kind=OPTIMIZER, detached=True)
        if qualified.startswith("torch.distributions.") and function[:1].isupper():
            return _combine(args, kind=DISTRIBUTION)
        if not namespace and function in _INTEGER_TENSOR_METHODS and args:  # ``torch.argmin(d, dim=1)``: indices
            return Value(kind=TENSOR, detached=True, device=args[0].device,
                         device_params=args[0].device_sources)
        if function in _JOINS and args:
            pieces = args[0].any_element() if args[0].kind == SEQUENCE else args[0]
            return _combine([pieces, args[0]], kind=TENSOR, host=pieces.host)
        if namespace not in _TENSOR_NAMESPACES or torch_gives_no_tensor(function) or \
                qualified.startswith(("torch.cuda.", "torch.utils.")):
            return Value(detached=True)
        if function == "load":
            return UNKNOWN
        scalar = function in _FULL_REDUCTIONS and len(call.args) == 1
        return _combine(args, kind=TENSOR, scalar=scalar) if args else Value(kind=TENSOR, detached=True)

    def _known_method(self, method: str, func: cst.Attribute, call: cst.Call, at: cst.CSTNode) -> Optional[Value]:
        """Methods whose result the receiver's own kind does not change (asked before the
        file's own methods: ``loss.item()`` is a number whatever ``loss`` is)."""
        if method in _NUMBER_METHODS:
            return NUMBER_VALUE
        if method in ("tolist", "numpy"):
            return Value(kind=SEQUENCE if method == "tolist" else OTHER, detached=True)
        if method in HOOK_REGISTRATIONS or method in ("zero_grad", "backward", "append", "extend", "insert"):
            return OTHER_VALUE
        if method in ("detach", "detach_"):
            receiver = self.value(func.value, at)
            return Value(kind=TENSOR if receiver.kind in (TENSOR, None) else receiver.kind, detached=True,
                         device=receiver.device, scalar=receiver.scalar, loss=receiver.loss,
                         host=receiver.host, device_params=frozenset() if receiver.host else
                         receiver.device_sources | ({receiver.alias} if receiver.alias else set()))
        return None

    def _method(self, method: str, receiver: Value, func: cst.Attribute, call: cst.Call, at: cst.CSTNode) -> Value:
        """A method of something this file does not define: a tensor's, a container's, a
        module's, an optimizer's, or an unknown object's."""
        if receiver.is_nothing:
            return NOTHING  # a cycle (``self.x = self.x.to(device)``) adds nothing to what ``x`` holds
        if receiver.kind == MODULE and method in MODULE_RETURNING_METHODS:
            destination = self._to_destination(call) if method == "to" else None
            device = receiver.device if method not in ("cuda", "cpu", "to") else (
                method == "cuda" or (method == "to" and (destination if destination is not None else receiver.device)))
            return replace(receiver, device=bool(device))
        if receiver.kind == OPTIMIZER:
            return Value(detached=True)
        if receiver.kind == DISTRIBUTION:  # ``sample()`` draws without a graph; ``log_prob``, ``rsample`` keep it
            if method in _DISTRIBUTION_DRAWS:
                return Value(kind=TENSOR, detached=True, device=receiver.device)
            return receiver.derived(kind=TENSOR)
        # (no graph; in a helper, on the device of the arguments the receiver is computed from)
        if method in _FRESH_TENSOR_METHODS and receiver.kind in (TENSOR, None):
            return Value(kind=TENSOR, detached=True, device=receiver.device,
                         device_params=receiver.device_sources)
        if method in _INTEGER_TENSOR_METHODS:
            return Value(kind=TENSOR if _tensor_receiver(method, receiver) else None, detached=True,
                         device=receiver.device, device_params=receiver.device_sources)
        if method in ("parameters", "named_parameters") and (
                receiver.kind == MODULE or is_model_name(terminal_name(func.value)) or
                dotted_name(func.value) == "self" and self.scopes.of_module_class(self.scopes.function_of(call))):
            parameter = Value(kind=TENSOR, leaf=True, device=receiver.device)
            return Value(kind=SEQUENCE, element=parameter if method == "parameters" else
                         Value(kind=SEQUENCE, elements=(OTHER_VALUE, parameter)))
        if method == "state_dict" and _keyword_true(call, "keep_vars"):
            # (a module's parameters themselves, which carry the graph of anything computed from them)
            return Value(kind=MAPPING, element=Value(kind=TENSOR, leaf=True, device=receiver.device))
        if method in GRAPH_BREAKING_METHODS:
            return Value(detached=True, device=receiver.device and method in ("state_dict", "parameters",
                                                                               "named_parameters", "buffers"))
        if method == "step" and "scheduler" in (terminal_name(func.value) or "").lower() and len(call.args) >= 3 and (
                self.scopes.in_generation_function(call) or self.scopes.in_inference_function(call)) and \
                not self.scopes.in_model_method(call):
            # a diffusion sampler's ``scheduler.step(noise_pred, t, latents)`` (a learning-rate
            # scheduler's takes no tensors) in a script's sampling function: the previous sample,
            # computed from what it is given (elsewhere, a scheduler's tests step a dummy model's
            # output, and a model's own ``decode`` leaves grad to its callers)
            given = [self.value(a.value, at) for a in call.args]
            return _combine(given, kind=RECORD)
        if method in ("items", "values"):
            # (a "tensor" with ``.items()`` was a guess: the dict of losses a loss function returns)
            entry = receiver.any_element() if receiver.kind in (MAPPING, RECORD, None) else \
                receiver.derived(kind=None) if receiver.kind == TENSOR else UNKNOWN
            if method == "items":
                entry = Value(kind=SEQUENCE, elements=(OTHER_VALUE, entry), graph=entry.graph, device=entry.device,
                              params=entry.params, why=entry.why)
            return Value(kind=SEQUENCE, element=entry, graph=entry.graph, device=entry.device, params=entry.params,
                         why=entry.why)
        if method in ("get", "pop", "setdefault") and receiver.kind in (MAPPING, RECORD, SEQUENCE, None):
            key = literal_key(call.args[0].value) if call.args else None
            found = receiver.field(key) if isinstance(key, str) else None
            if found is not None:
                return found
            if method == "pop" and receiver.kind == SEQUENCE:
                return receiver.any_element()
            return receiver.any_element() if receiver.kind in (MAPPING, SEQUENCE) else receiver.derived()
        if method == "copy" and receiver.kind in (MAPPING, SEQUENCE):
            return receiver
        if method in _GATHERING_METHODS and not receiver.graph:
            gathered = self.value(call.args[0].value, at) if call.args else UNKNOWN
            if _FRAMEWORK_RECEIVER.search(dotted_name(func.value) or ""):
                # accelerate's and Fabric's collectives return their argument itself on one process
                # (``reduce`` a clone), graph and all; only across processes is the copy detached.
                return gathered.derived(kind=gathered.kind, device=True, loss=gathered.loss, scalar=False).travelled(
                    call, f"returned with its graph by `{_spelled(call)}()` on one process")
            return Value(kind=gathered.kind, detached=True, device=True, loss=gathered.loss, scalar=False)
        if method == "cpu":
            return receiver.derived(device=False, device_params=frozenset(), host=True, scalar=receiver.scalar,
                                    loss=receiver.loss,
                                    kind=receiver.kind if receiver.kind in (TENSOR, MODULE) else None)
        if method == "cuda":
            return receiver.derived(device=True, host=False, kind=receiver.kind if receiver.kind in (TENSOR, MODULE) else None,
                                    scalar=receiver.scalar, loss=receiver.loss)
        if method == "to":
            destination = self._to_destination(call)
            return receiver.derived(device=receiver.device if destination is None else destination,
                                    device_params=receiver.device_params if destination is None else frozenset(),
                                    host=receiver.host if destination is None else not destination,
                                    kind=receiver.kind if receiver.kind in (TENSOR, MODULE) else None,
                                    scalar=receiver.scalar, loss=receiver.loss)
        if method == "generate" and (receiver.kind == MODULE or is_model_name(terminal_name(func.value))):
            if _GAN_GENERATOR.search(terminal_name(func.value) or ""):
                # a GAN generator's sampling is its forward pass (a language model's decoding is not)
                return Value(graph=True, device=not self._host_only_file,
                             why=((call, f"graph made by `{_spelled(call)}(...)`"),))
            return Value(kind=TENSOR, detached=True, device=True)
        if receiver.kind not in (TENSOR, None) and receiver.kind != MODULE:
            return UNKNOWN
        if method == "requires_grad_" and not receiver.graph and receiver.kind != MODULE and not (
                call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"):
            # ``x.clone().requires_grad_()``: a new leaf
            return Value(kind=TENSOR, leaf=True, device=receiver.device)
        named_model = is_model_name(terminal_name(func.value)) and not receiver.graph and \
            not _LOSS_NAME.search(terminal_name(func.value) or "")
        # ``model.linear_probe(code)`` on a known module, or a forward-like method of something
        # named like a model (``model.encode(x)``; not ``model.get_env()`` of an RL library's agent)
        on_model = receiver.kind == MODULE or (named_model and (_FORWARD_LIKE.search(method) or any(
            (v := self.value(a.value, at)).device or v.graph or v.kind == TENSOR for a in call.args)))
        if named_model and not on_model:
            return UNKNOWN
        if on_model:  # on the model's device
            return Value(device=method not in _MODEL_NON_TENSOR_METHODS and not self._host_only_file,
                         detached=method in _MODEL_NON_TENSOR_METHODS)
        if receiver.kind is None and not receiver.graph and call.args and _TRANSFORMING_METHOD.match(method):
            # (``self.scaler.inverse_transform(pred)``, ``normalizer.denormalize(x)``: a tensor in, the
            # same tensor rescaled out, on its device and with its graph)
            given = self.value(call.args[0].value, at)
            if given.kind == TENSOR or given.graph or given.device:
                return given.derived(kind=given.kind, scalar=given.scalar)
        # A tensor method keeps the graph: the receiver's, and an operand's (``sums.scatter_add(0,
        # index, feats)``, ``a.matmul(b)``), not that of a tensor giving only a shape (``expand_as``).
        if method in _COMBINING_METHODS and call.args and (receiver.kind == TENSOR or receiver.graph or receiver.leaf):
            # (``buffer.add(batch)`` of an object that is not known to be a tensor stores, it does not compute)
            operands = _combine([receiver, *(self.value(a.value, at) for a in call.args)])
            receiver = replace(receiver, graph=operands.graph, detached=operands.detached, device=operands.device,
                               host=receiver.host and not operands.device, params=operands.params,
                               why=receiver.why or operands.why)
        reduction = method in _FULL_REDUCTIONS and not call.args
        keeps_loss = method in _LOSS_KEEPING_METHODS
        return receiver.derived(
            kind=TENSOR if receiver.kind == TENSOR or reduction or _tensor_receiver(method, receiver)
            and method not in _SEVERAL_RESULTS else None,
            scalar=reduction or (keeps_loss and receiver.scalar and method not in ("repeat", "expand")),
            loss=reduction or (keeps_loss and receiver.loss))

    def _is_autograd_function(self, expr: cst.BaseExpression) -> bool:
        cls = self.scopes.classes_by_name.get(expr.value) if isinstance(expr, cst.Name) else None
        return cls is not None and any(base in FUNCTION_BASES for base in self.scopes.class_bases(cls))

    @cached_property
    def _host_only_file(self) -> bool:
        """The file names a device only to choose the CPU (``device = torch.device("cpu")``,
        ``def act(state, device="cpu")``) and never CUDA (no ``.cuda()``, no ``"cuda"``): a model
        it runs is taken to be on the host, not on an accelerator somewhere else."""
        named = False
        for assign in self.tree.nodes(cst.Assign):
            if any(isinstance(t.target, cst.Name) and _DEVICE_NAME.search(t.target.value) for t in assign.targets):
                if not _is_cpu(assign.value):
                    return False
                named = True
        for param in self.tree.nodes(cst.Param):
            if _DEVICE_NAME.search(param.name.value) and not _is_cpu(param.default):
                return False
        return named and not any(a.attr.value == "cuda" for a in self.tree.nodes(cst.Attribute)) and not any(
            "cuda" in string.value for string in self.tree.nodes(cst.SimpleString))

    def _is_host(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``"cpu"``, ``torch.device("cpu")``, or a name only ever bound to one (``device =
        torch.device("cpu")`` at the top of a script that runs on the CPU), a parameter's default
        included (``output_device="cpu"``: the output is put on the host unless a caller asks)."""
        if _is_cpu(expr):
            return True
        if not isinstance(expr, cst.Name):
            return False
        bindings = self.scopes.bindings_of(expr.value, at)
        return bool(bindings) and all(_is_cpu(b.node.default if isinstance(b.node, cst.Param) else b.value)
                                      for b in bindings)

    def _to_destination(self, call: cst.Call) -> Optional[bool]:
        """For ``x.to(...)``: True if it moves to an accelerator, False if to the CPU, None if
        it only changes the dtype (the device stays)."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value != "device":
                continue
            value = arg.value
            if self._is_host(value, call):
                return False
            if isinstance(value, cst.SimpleString):
                return True
            qualified = self.imports.qualify(value) or ""
            if qualified.startswith("torch.") and qualified != "torch.device":
                continue  # a dtype such as torch.float16
            if isinstance(value, cst.Call) and (self.imports.qualify(value.func) == "torch.device"):
                return not (value.args and _is_cpu(value.args[0].value))
            if _DEVICE_NAME.search(dotted_name(value) or ""):
                return True
            if arg.keyword is not None:
                return True
        return None

    def _builtin(self, name: str, call: cst.Call, at: cst.CSTNode) -> Value:
        args = [self.value(a.value, at) for a in call.args if a.keyword is None]
        if name in _NUMBER_BUILTINS or name in ("abs",) and args and args[0].kind == NUMBER:
            return NUMBER_VALUE
        if name in BREAKING_BUILTINS and name != "enumerate":  # (enumerate breaks a chain, not its elements)
            return OTHER_VALUE if name in ("str", "repr", "format", "type", "print") else NUMBER_VALUE
        if name in _SEQUENCE_BUILTINS:
            element = args[0].any_element() if args else NOTHING
            return _combine([element], kind=SEQUENCE, element=element) if args else Value(kind=SEQUENCE, detached=True)
        if name == "enumerate" and args:
            pair = Value(kind=SEQUENCE, elements=(NUMBER_VALUE, args[0].any_element()))
            return _combine([args[0].any_element()], kind=SEQUENCE, element=replace(pair, **_facets(args[0].any_element())))
        if name == "zip" and args:
            elements = tuple(a.any_element() for a in args)
            pair = _combine(list(elements), kind=SEQUENCE, elements=elements)
            return _combine(list(elements), kind=SEQUENCE, element=pair)
        if name == "dict":
            fields = tuple((a.keyword.value, self.value(a.value, at)) for a in call.args if a.keyword is not None)
            if not args:  # ``dict()``, ``dict(loss=loss)``: its keys are known, as a literal's
                return _pack([v for _, v in fields], kind=MAPPING, fields=fields, element=None)
            base = args[0]
            pair = base.any_element() if base.kind == SEQUENCE else None
            if pair is not None and pair.elements is not None and len(pair.elements) == 2:
                # ``dict(model.named_parameters())``, ``dict(zip(keys, values))``: the pairs' values
                base = replace(base, element=pair.elements[1])
            return join([base, _combine([v for _, v in fields], kind=MAPPING, fields=fields)]) if fields else \
                replace(base, kind=MAPPING)
        if name in ("sum", "max", "min") and args:
            parts = [a.any_element() if a.kind in (SEQUENCE, MAPPING) or len(args) == 1 else a for a in args]
            return self._arithmetic(*parts) if len(parts) == 2 else parts[0].derived(
                kind=parts[0].kind, scalar=parts[0].scalar, loss=parts[0].loss)
        if name == "next" and args:
            return args[0].any_element()
        if name == "getattr" and len(call.args) >= 2:
            attribute = literal_key(call.args[1].value)
            if isinstance(attribute, str):
                found = args[0].field(attribute)
                if found is not None:
                    return found
            return args[0].derived() if args else UNKNOWN
        if name == "map" and len(args) >= 2:
            mapped = [self.summary(f).returns for f in self.calls.functions_given(call.args[0].value, call)]
            if mapped and all(r.detached and not r.params for r in mapped):
                # ``map(lambda t: t.detach().cpu(), tensors)``: what the function returns, none of
                # the elements' graph
                return _combine(mapped, kind=SEQUENCE, element=join(mapped))
        if name in ("map", "filter", "iter"):
            return _combine(args, kind=SEQUENCE, element=args[-1].any_element() if args else None)
        if name == "locals" and not call.args and isinstance(scope := self.scopes.scope_of(call), cst.FunctionDef):
            # ``self._collect(outputs, local_vars=locals())``: a mapping of the function's names, as
            # bound where it is called (a helper picks the step's outputs from it by name)
            fields = tuple((local, join([self._binding_value(b, local) for b in self.scopes.bindings_of(local, call)]))
                           for local in self.scopes.bindings(scope) if local != "self")
            return _combine([v for _, v in fields], kind=MAPPING, fields=fields)
        if name in ("super", "open", "vars", "globals", "locals", "callable", "hasattr", "setattr", "delattr",
                    "input", "exit", "quit", "min_", "ord", "chr", "bin", "hex", "oct", "divmod", "pow_"):
            return OTHER_VALUE
        return UNKNOWN

    # -- attributes and items ----------------------------------------------------------------
    def _attribute(self, expr: cst.Attribute, at: cst.CSTNode) -> Value:
        name = expr.attr.value
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            own = self._self_attribute(expr, at)
            if own is not None and self._items_detached_before(expr, at):
                return own.without_graph()
            if own is not None:
                return own
        base = self.value(expr.value, at)
        if name == "indices" and self._returns_indices(expr.value):  # ``logits.max(dim=1).indices``
            return _indices(base)
        if name in NON_GRAPH_ATTRIBUTES:
            if name in DETACHED_TENSOR_ATTRIBUTES:
                return Value(kind=TENSOR if base.kind == TENSOR else None, detached=True, device=base.device)
            return Value(detached=True, kind=SEQUENCE if name == "shape" else OTHER)
        field = base.field(name)
        cls = self.scopes.classes_by_name.get(base.cls) if base.cls is not None else None
        if field is not None and cls is not None and name in self.self_list_growth(cls):
            # ``monitor.records``: what ``__init__`` set, and what the methods append to it since
            field = join([field, self.class_attribute(cls, name)])
        if field is not None:
            return field.travelled(expr, f"read as `.{name}`")
        if base.cls is not None:
            cls = self.scopes.classes_by_name.get(base.cls)
            if cls is not None and name in self.self_assignments(cls):
                return self.class_attribute(cls, name).travelled(expr, f"read as `.{name}`")
        elif base.kind is None and base.fields is None and not base.graph and _held_by_self(expr.value):
            owner = self._only_class_assigning(name)
            if owner is not None and owner is not self.scopes.self_class(self.scopes.function_of(at)):
                # ``self.model.avg`` where ``self.model`` was handed in and one class of the file
                # sets ``self.avg``: most likely an object of that class (a guess, as for a method
                # found by its name alone)
                return self.class_attribute(owner, name).travelled(expr, f"read as `.{name}`")
        if base.kind in (MODULE, None) and not base.graph and name in self._parameter_attribute_names:
            # (``m.sqrt_end_time`` of ``for m in model.modules()``, which a module class of the
            # file makes an ``nn.Parameter``: a leaf, what is computed from it holds a graph)
            return Value(device=base.device, leaf=True, kind=TENSOR)
        if base.kind in (OPTIMIZER, NUMBER, OTHER):
            return Value(detached=True)
        if names_text(name) and base.kind != MODULE:
            return OTHER_VALUE  # ``result.text`` of a decoding result, ``sample.path``: strings
        if names_a_count(name) and base.kind != MODULE:
            return NUMBER_VALUE  # ``data.num_graphs`` of a batch on the device: an integer
        if base.kind == MODULE:  # a submodule or a parameter: no graph of its own
            return Value(device=base.device, detached=True, kind=None)
        return base.derived(kind=TENSOR if base.kind == TENSOR and name in ("T", "mT", "H", "real", "imag") else None,
                            loss=name == "loss").travelled(expr, f"read as `.{name}`")

    def _subscript(self, expr: cst.Subscript, at: cst.CSTNode) -> Value:
        base = self.value(expr.value, at)
        key = self.scopes.key_of(expr)
        if key == 1 and self._returns_indices(expr.value):  # ``logits.max(-1)[1]``: integer indices, no graph
            return _indices(base)
        if base.kind in (OPTIMIZER, NUMBER, OTHER):
            return Value(detached=True)
        if isinstance(key, str):
            found = base.field(key)
            if found is not None:
                return found.travelled(expr, f"read as `[{key!r}]`")
            element = base.any_element() if base.kind in (MAPPING, SEQUENCE, RECORD) else base.derived()
            return replace(element, loss=element.loss or "loss" in key.lower()).travelled(expr, f"read as `[{key!r}]`")
        if isinstance(key, int) and base.kind in (SEQUENCE, RECORD) or base.elements is not None and isinstance(key, int):
            return base.item(key)
        if base.kind == TENSOR or base.kind is None and (base.device or base.graph) and _multidimensional(expr):
            # (``hidden[:, 0]`` of a device value: no list, tuple or dict takes a tuple of slices)
            return self._computed(base.derived(kind=TENSOR), at)
        if base.kind == MODULE:
            return Value(kind=MODULE, device=base.device)
        return base.any_element()

    def _self_attribute(self, expr: cst.Attribute, at: cst.CSTNode) -> Optional[Value]:
        """``self.x`` in a method: what the method assigned to it earlier, else what any method
        of the class assigns to it; a submodule for a module's attribute made from a module."""
        method = self.scopes.function_of(at)
        cls = self.scopes.self_class(method)
        if cls is None:
            return None
        name = expr.attr.value
        kind = self.modules.attribute_kinds(cls).get(name)
        if kind in ("module", "parameters"):
            return Value(kind=MODULE)
        assigned = self.self_assignments(cls).get(name)
        if not assigned:
            return Value(kind=TENSOR) if kind == "tensor" else None  # ``register_buffer("name", ...)``
        earlier = [a for a in assigned if self.scopes.function_of(a.node) is method and self.tree.before(a.node, at)
                   and not self.tree.contains(a.node, at)]
        if earlier:
            return self.assigned_value(earlier[-1])
        return self.class_attribute(cls, name)

    @cached_property
    def _parameter_attribute_names(self) -> frozenset[str]:
        """Attributes that a module class of the file sets to an ``nn.Parameter``
        (``self.sqrt_end_time = nn.Parameter(...)``)."""
        return frozenset(
            target.target.attr.value for cls in self.scopes.classes_by_name.values()
            if self.scopes.is_torch_module_class(cls) for assign in self.tree.descendants(cls, cst.Assign)
            if isinstance(assign.value, cst.Call) and self.imports.qualify(assign.value.func) in PARAMETER_CLASSES
            for target in assign.targets
            if isinstance(target.target, cst.Attribute) and dotted_name(target.target.value) == "self")

    def _only_class_assigning(self, name: str) -> Optional[cst.ClassDef]:
        """The one class of the file whose methods other than ``__init__`` assign ``self.<name>``."""
        if self._classes_by_assigned is None:
            self._classes_by_assigned = {}
            for cls in self.scopes.classes_by_name.values():
                for attribute, assignments in self.self_assignments(cls).items():
                    if any((f := self.scopes.function_of(a.node)) is not None and f.name.value != "__init__"
                           and self.scopes.class_of(f) is cls for a in assignments):
                        self._classes_by_assigned.setdefault(attribute, []).append(cls)
        owners = self._classes_by_assigned.get(name, ())
        return owners[0] if len(owners) == 1 else None

    def class_attribute(self, cls: cst.ClassDef, name: str) -> Value:
        """What any method of ``cls`` assigns to ``self.<name>``, joined."""
        key = (cls, name)
        known = self._attributes.get(key)
        if known is not None:
            return known
        return self._answer(self._attributes, key, NOTHING, lambda: self._assigned_anywhere(cls, name))

    def _assigned_anywhere(self, cls: cst.ClassDef, name: str) -> Value:
        values = [self.assigned_value(a) for a in self.self_assignments(cls).get(name, ())]
        result = join(values) if values else UNKNOWN
        if result.kind == SEQUENCE:  # ``self.records = []``, filled by ``self.records.append(output)``
            appended = [self.value(call.args[0].value, call) for call in self.self_list_growth(cls).get(name, ())
                        if call.args]
            if appended:
                part = join([result.element or NOTHING, *appended])
                result = replace(_combine([result, part], kind=SEQUENCE), element=part, elements=None)
        return result

    def self_list_growth(self, cls: cst.ClassDef) -> dict[str, list[cst.Call]]:
        """``self.<name>.append(v)`` in the methods of ``cls``, by name."""
        known = self._growth.get(cls)
        if known is None:
            known = {}
            for call in self.tree.descendants(cls, cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value == "append" and \
                        isinstance(func.value, cst.Attribute) and dotted_name(func.value.value) == "self":
                    method = self.scopes.function_of(call)
                    if method is not None and self.scopes.class_of(method) is cls:
                        known.setdefault(func.value.attr.value, []).append(call)
            self._growth[cls] = known
        return known

    def assigned_value(self, assignment: "SelfAssignment") -> Value:
        value = self.value(assignment.value, assignment.node)
        if assignment.position is not None:
            value = value.item(assignment.position)
        if isinstance(assignment.node, cst.AugAssign):
            value = self._computed(value.derived(kind=value.kind if value.kind == TENSOR else None), assignment.node)
        return value

    def self_assignments(self, cls: cst.ClassDef) -> dict[str, list["SelfAssignment"]]:
        """``self.<name> = value`` (also ``+=`` and tuple targets) in the methods of ``cls`` and
        its base classes of this file."""
        known = self._self_assignments.get(cls)
        if known is not None:
            return known
        found: dict[str, list[SelfAssignment]] = {}
        self._self_assignments[cls] = found
        owners = [cls] + [c for b in self.scopes.class_bases(cls)
                          if (c := self.scopes.classes_by_name.get(b)) is not None and c is not cls]
        for owner in owners:
            for node in (*self.tree.descendants(owner, cst.Assign), *self.tree.descendants(owner, cst.AugAssign),
                         *self.tree.descendants(owner, cst.AnnAssign)):
                if node.value is None:
                    continue
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    for position, attribute in _self_targets(target):
                        found.setdefault(attribute, []).append(SelfAssignment(node.value, node, position))
        return found

    # -- composite values ----------------------------------------------------------------------
    def _sequence(self, elements, at: cst.CSTNode) -> Value:
        values = []
        spread = []
        for element in elements:
            if isinstance(element, cst.StarredElement):
                spread.append(self.value(element.value, at).any_element())
            else:
                values.append(self.value(element.value, at))
        if spread:
            element = join(values + spread)
            return _pack([element], kind=SEQUENCE, element=element)
        return _pack(values, kind=SEQUENCE, elements=tuple(values))

    def _mapping(self, expr: cst.Dict, at: cst.CSTNode) -> Value:
        fields: dict[str, Value] = {}
        others: list[Value] = []
        for element in expr.elements:
            if isinstance(element, cst.StarredDictElement):
                spread = self.value(element.value, at)
                fields.update(spread.fields or ())
                if spread.element is not None:
                    others.append(spread.element)
                elif not spread.fields:  # (``{"step": step, **metrics}`` of a parameter: whatever it holds)
                    others.append(spread.any_element())
                continue
            key = literal_key(element.key)
            value = self.value(element.value, at)
            if isinstance(key, str):
                fields[key] = value
            else:
                others.append(value)
        parts = list(fields.values()) + others
        return _pack(parts, kind=MAPPING, fields=tuple(fields.items()), element=join(others) if others else None)

    @staticmethod
    def _arithmetic(left: Value, right: Value) -> Value:
        kinds = {left.kind, right.kind}
        kind = TENSOR if TENSOR in kinds else NUMBER if kinds == {NUMBER} else None
        numeric = {NUMBER}
        scalar = (left.scalar or left.kind in numeric) and (right.scalar or right.kind in numeric) and kind != NUMBER
        loss = (left.loss and (right.kind == NUMBER or right.scalar or not right.device)) or \
            (right.loss and (left.kind == NUMBER or left.scalar or not left.device))
        return _combine([left, right], kind=kind, scalar=scalar, loss=loss)


@dataclass(frozen=True)
class SelfAssignment:
    """``self.<name> = value`` at ``node``; ``position``: the element of a tuple assigned to several
    targets (``self.h, self.c = state``)."""

    value: cst.BaseExpression
    node: cst.CSTNode
    position: Optional[int] = None


_FRAMEWORK_RECEIVER = re.compile(r"accelerator|fabric", re.IGNORECASE)
_LOSS_NAME = re.compile(r"(?:loss|Loss|criterion)$")
# A GAN's generator (``self.generator.generate(n)``, ``netG.generate(z)``), not a language model.
_GAN_GENERATOR = re.compile(r"(?:^|_)(?:generator|gen|netG|G)$", re.IGNORECASE)


def _self_targets(target: cst.BaseExpression) -> list[tuple[Optional[int], str]]:
    """The ``self.<name>`` attributes an assignment target binds, with their tuple position."""
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        return [(None, target.attr.value)]
    if isinstance(target, (cst.Tuple, cst.List)):
        found = []
        for position, element in enumerate(target.elements):
            inner = element.value
            if isinstance(inner, cst.Attribute) and isinstance(inner.value, cst.Name) and inner.value.value == "self":
                found.append((position, inner.attr.value))
        return found
    return []


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, (cst.Name, cst.Attribute)):  # (``..., self.tau_t, ... = sat(...)``)
        return dotted_name(target) == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False


def _subscripted(target: cst.BaseExpression) -> tuple[Optional[str], int]:
    """The name under a chain of subscripts and how many there are: ``("losses", 2)`` for
    ``losses[mode]["cat"]``; no name where the chain starts elsewhere (``self.d[k]``)."""
    depth = 0
    while isinstance(target, cst.Subscript):
        target, depth = target.value, depth + 1
    return (target.value if isinstance(target, cst.Name) else None), depth


def _with_graph_of(element: Optional[Value], added: Value, depth: int) -> Value:
    """A container's element after ``+=`` of ``added`` into an item ``depth`` subscripts deep
    (1: ``d[k] += x``; 2: ``d[m][k] += x``): it may hold ``added``'s graph."""
    if depth <= 1:
        return join([element or NOTHING, added])
    inner = element.element if element is not None else None
    return replace(element or UNKNOWN, element=_with_graph_of(inner, added, depth - 1))


def destructure(value: Value, target: cst.BaseExpression, name: str) -> Value:
    """The part of ``value`` that ``name`` gets when ``value`` is unpacked into ``target``."""
    if isinstance(target, (cst.Name, cst.Attribute)):
        return value if dotted_name(target) == name else NOTHING
    if isinstance(target, (cst.Tuple, cst.List)):
        for position, element in enumerate(target.elements):
            if _binds(element.value, name):
                part = value.any_element() if isinstance(element.value, cst.StarredElement) else value.item(position)
                inner = element.value.value if isinstance(element.value, cst.StarredElement) else element.value
                return destructure(part, inner, name)
    return UNKNOWN


def _substitute(value: Value, arguments: dict[str, Value]) -> Value:
    """``value`` (from a function's summary) with each parameter's contribution replaced by what
    the call site passes: the caller's values, and the caller's own parameters where it passes
    them on."""
    if value.alias is not None:
        given = arguments.get(value.alias)
        return given if given is not None else replace(value, alias=None, params=frozenset())
    passed = [arguments[p] for p in sorted(value.params) if p in arguments]  # (sorted: the same why on every run)
    substituted = replace(
        value,
        # (what a function computes from a parameter of a model it is handed, ``shadow - x`` for
        # ``x`` a leaf that requires grad, holds a graph: ``value`` is not ``x`` itself, its alias)
        graph=value.graph or not value.detached and (
            any(v.graph for v in passed) or value.kind not in (NUMBER, OTHER) and any(v.leaf for v in passed)),
        # (``device_params``: a helper's graph-free result on its arguments' device, ``x.detach()``)
        device=value.device or not value.host and any(
            v.device for v in (*passed, *(arguments[p] for p in value.device_params if p in arguments))),
        detached=value.detached,  # (graph-free whatever it is given, or graph-free only if that is)
        params=frozenset().union(*(v.params for v in passed)) if passed else frozenset(),
        device_params=frozenset(),  # (its device is read above; what it keeps is read where it keeps it)
        elements=tuple(_substitute(e, arguments) for e in value.elements) if value.elements else value.elements,
        fields=tuple((k, _substitute(v, arguments)) for k, v in value.fields) if value.fields else value.fields,
        element=_substitute(value.element, arguments) if value.element else None,
        why=value.why or next((v.why for v in passed if v.graph), ()),
    )
    return substituted


# Tensor methods that return a tuple (of values and indices, of chunks) rather than one tensor.
# Tensor methods that, given a dimension, return (values, indices).
_VALUES_AND_INDICES = frozenset({"max", "min", "topk", "sort", "median", "mode", "kthvalue", "cummax", "cummin"})


def _is_key(index: cst.BaseExpression) -> bool:
    """A dict's key, not a position: a string, or a name or attribute that says it is a key
    (``self.output_key``, ``key``, ``name``)."""
    if isinstance(index, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    spelled = index.attr.value if isinstance(index, cst.Attribute) else index.value if isinstance(index, cst.Name) else ""
    return spelled.lower().endswith(("key", "name"))


def _held_by_self(expr: cst.BaseExpression) -> bool:
    """``self.<name>``: an object this one keeps (a collaborator handed to its constructor)."""
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


# Factories that make a one-number tensor from a number: ``torch.tensor(0.0)``.
_SCALAR_FACTORIES = frozenset({"tensor", "as_tensor", "scalar_tensor"})


def _number_literal(expr: cst.BaseExpression) -> bool:
    """``0``, ``0.0``, ``-1.0``."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def _constant_scalar(value: Value) -> bool:
    """A number, or a one-number tensor holding no graph (``torch.tensor(0.0)``)."""
    return value.kind == NUMBER or value.scalar and not value.graph and not value.leaf


def _indices(values: Value) -> Value:
    """The integer indices of a ``(values, indices)`` result: on the device of ``values`` (in a
    helper, of the arguments ``values`` is computed from), no graph."""
    return Value(kind=TENSOR, detached=True, device=values.device, device_params=values.device_sources)


# Tensor methods whose result is computed from their tensor arguments' values as well.
_COMBINING_METHODS = frozenset({
    "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "matmul", "mm", "bmm", "mv",
    "dot", "pow", "scatter_add", "scatter_add_", "scatter", "scatter_", "index_add", "index_add_",
    "index_copy", "index_copy_", "masked_scatter", "lerp", "lerp_", "addcmul", "addcmul_", "addcdiv",
    "addcdiv_", "addmm", "baddbmm", "where", "maximum", "minimum", "copy_", "outer", "cross",
})
_SEVERAL_RESULTS = frozenset({"max", "min", "topk", "chunk", "split", "sort", "unbind", "median", "mode", "kthvalue"})


def _tensor_receiver(method: str, receiver: Value) -> bool:
    """Whether the receiver of ``method`` is surely a tensor: known to be one, or a value that may
    hold a graph or device memory (so no module, number or string) calling a method only a tensor
    has (a tuple, a dict or a ``ModelOutput`` lacks ``argmax``): if the code runs, it is a tensor."""
    return receiver.kind == TENSOR or receiver.kind is None and (receiver.graph or receiver.device) and \
        method in _TENSOR_ONLY_MEMBERS


def _facets(value: Value) -> dict:
    return dict(graph=value.graph, device=value.device, params=value.params, why=value.why)



def _is_container_annotation(annotation: cst.BaseExpression) -> bool:
    """``dict[str, Tensor]``, ``List[Tensor]``, ``tuple[Tensor, ...]`` (not ``Optional[Tensor]``)."""
    if not isinstance(annotation, cst.Subscript):
        return False
    outer = annotation.value
    name = outer.attr.value if isinstance(outer, cst.Attribute) else outer.value if isinstance(outer, cst.Name) else ""
    return name.lower() in ("dict", "list", "tuple", "sequence", "mapping", "iterable", "set", "deque")


def _excludes_tensors(annotation: cst.BaseExpression) -> bool:
    """An annotation made only of builtin scalars and containers (``set[str]``,
    ``Optional[dict[str, int]]``, ``bool | None``)."""
    pending, names = [annotation], []
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name):
            names.append(node.value)
        elif isinstance(node, (cst.Attribute, cst.BaseString, cst.Call, cst.Lambda)):
            return False  # ``torch.Tensor``, ``"Output"``, anything not spelled out here
        else:
            pending.extend(node.children)
    return bool(names) and all(n in NON_TENSOR_ANNOTATIONS for n in names)


_BARE_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "Tensor", "torch.FloatTensor", "torch.LongTensor"})


def _unquoted(annotation: cst.BaseExpression) -> Optional[str]:
    """The dotted name an annotation spells, in quotes or not."""
    if isinstance(annotation, cst.SimpleString):
        return annotation.evaluated_value.strip() if isinstance(annotation.evaluated_value, str) else None
    return dotted_name(annotation)


def _may_hold_tensor(value: Value) -> bool:
    if value.kind == TENSOR or value.graph or value.device:
        return True
    if value.kind in (SEQUENCE, MAPPING, RECORD):
        # (each part on its own: ``return contributions, envelope, range(...)`` joins a tensor
        # with a range into a value of no known kind)
        parts = value.parts()
        return any(_may_hold_tensor(part) for part in parts) if parts else _may_hold_tensor(value.any_element())
    return False


def _keyword_true(call: cst.Call, name: str) -> bool:
    value = keyword_value(call, name)
    return value is not None and not (isinstance(value, cst.Name) and value.value in ("False", "None"))


def _reduces(call: cst.Call) -> bool:
    """No ``reduction="none"`` (nor the deprecated ``reduce=``/``size_average=``) argument."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "reduction":
            return isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value in ("mean", "sum")
        if arg.keyword is not None and arg.keyword.value in ("reduce", "size_average"):
            return False
    return True


def _is_cpu(expr: Optional[cst.BaseExpression]) -> bool:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value in ("cpu", b"cpu")
    if isinstance(expr, cst.Call) and expr.args:
        return _is_cpu(expr.args[0].value)
    return False


def _multidimensional(expr: cst.Subscript) -> bool:
    """``x[:, 0]``, ``x[..., 1:]``: an index of several dimensions, one of them a slice."""
    return len(expr.slice) > 1 and any(
        isinstance(element.slice, cst.Slice) or isinstance(element.slice, cst.Index)
        and isinstance(element.slice.value, cst.Ellipsis) for element in expr.slice)


def _spelled(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Call):
        func = func.func
    return dotted_name(func) or terminal_name(func) or "..."


def _is_loss_class_name(name: str) -> bool:
    """``FocalLoss``, ``MaskedLmCriterion``: a class of the file that computes a loss."""
    return bool(_LOSS_NAME.search(name)) or "Criterion" in name


def _unpacked_length(node: cst.CSTNode) -> Optional[int]:
    """How many names ``a, b, c = ...`` at ``node`` unpacks into (None if the target is starred
    or is no tuple)."""
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None
    target = node.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or any(isinstance(e, cst.StarredElement) for e in target.elements):
        return None
    return len(target.elements)


def _moves_to_host(call: cst.Call) -> bool:
    """``x.cpu()``, ``x.to("cpu")``, ``x.to(torch.device("cpu"))``, ``x.to(device="cpu")``."""
    method = call.func.attr.value
    return not call.args if method == "cpu" else method == "to" and bool(call.args) and _is_cpu(call.args[0].value)
