"""Functions, classes, loops and bindings: where a name lives and how long it lives.

Vocabulary (RULES.md): an *iteration scope* is the body of a loop, a comprehension, or a method
the framework calls once per step; something *outlives the iteration* when it is a name bound
before the loop, an attribute, a module-level global, or an element of one of those."""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Optional, Union

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import (
    BATCH_STRIDE, CHUNK_STRIDE, DATASET_NAME, TENSOR_PIECES, EVAL_FUNCTION, GENERATION_FUNCTION, INFERENCE_FUNCTION, POST_PROCESSING_FUNCTION, LOSS_TERMS, ITERATION_BUILTINS, LOADER_ITERABLE, MODEL_CLASS_SUFFIXES,
    MODEL_RUNNING_METHODS, MODULE_RETURNING_METHODS, PER_STEP_METHODS, TRAINER_CALLBACK_STEP_METHODS,
    is_class_name, is_model_name, is_step_identifier, is_step_target, makes_training_step, steps_environment,
)

# Spelled as strings so that importing this module does not load LibCST (see cli.py).
Loop = Union["cst.For", "cst.While"]
Scope = Union["cst.Module", "cst.FunctionDef"]

# Per-step methods that Lightning already runs under torch.no_grad() (or inference_mode).
LIGHTNING_NO_GRAD_METHODS = frozenset({
    "validation_step", "test_step", "predict_step", "validation_step_end", "test_step_end",
    "on_validation_batch_end", "on_test_batch_end", "on_predict_batch_end",
    "on_validation_batch_start",
})
MODULE_BASES = ("torch.nn.Module", "torch.nn.modules.module.Module")
LIGHTNING_BASE = "LightningModule"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_UNKNOWN = object()


@lru_cache(maxsize=None)
def _node_types(kind: str) -> frozenset:
    """Sets of LibCST node classes the ancestor walks test with ``type(node) in ...`` (a
    membership test; ``isinstance`` on LibCST's ABC-based classes costs a metaclass check per
    miss, millions of them in a long function). Built on first use: LibCST loads lazily. None of
    these classes has subclasses."""
    return frozenset({
        "scope": (cst.FunctionDef, cst.Lambda, cst.ClassDef),
        "loop": (cst.For, cst.While),
        "block": (cst.If, cst.Else, cst.Try, cst.ExceptHandler, cst.For, cst.While),
        "branch": (cst.If, cst.Else, cst.Try, cst.ExceptHandler, cst.For, cst.While,
                   cst.FunctionDef, cst.Lambda, cst.ClassDef),
    }[kind])


def _if_arms(statement: cst.If) -> list[cst.CSTNode]:
    """The innermost branches of an ``if`` chain's arms (the ``If`` for its body, each ``elif``'s
    ``If``, the ``Else``), or a lone ``None`` where no ``else`` ends it (a path binds nothing)."""
    arms: list = [statement]
    while type(statement.orelse) is cst.If:
        statement = statement.orelse
        arms.append(statement)
    arms.append(statement.orelse)
    return arms


def _whole_dimension(part: cst.BaseSlice) -> bool:
    """``:`` (no bounds, no step)."""
    return isinstance(part, cst.Slice) and part.lower is None and part.upper is None and part.step is None


@dataclass(frozen=True)
class Binding:
    """``name`` is (re)bound at ``node`` (an assignment, loop target, parameter, with-item ...) to
    ``value`` when the value is a single known expression."""

    name: str
    node: cst.CSTNode
    value: Optional[cst.BaseExpression]
    augmented: bool = False
    # ``a, b = f()``: the position of the name in the unpacked tuple (``value`` is the call).
    index: Optional[int] = None


@dataclass(frozen=True)
class NameUses:
    """How a scope uses its plain names, beyond binding them: handed to a ``torch`` function
    (``torch.stack(losses)``), iterated (the loop or comprehension targets over each name),
    attributes read from them (``l.item()``) or from an item of them (``losses[0].item()``)."""

    torch_arguments: frozenset[str]
    element_names: dict[str, frozenset[str]]
    attribute_receivers: frozenset[str]
    item_attribute_receivers: frozenset[str]


class Scopes:
    def __init__(self, tree: Tree, imports: ImportTable) -> None:
        self.tree = tree
        self.imports = imports
        self._bindings: dict[cst.CSTNode, dict[str, list[Binding]]] = {}
        self._reaching: dict[tuple[str, cst.CSTNode], list[Binding]] = {}
        self._function_of: dict[cst.CSTNode, Optional[cst.FunctionDef]] = {}
        self._scope_nodes: dict[tuple[Scope, type], tuple] = {}
        self._nested_ranges: dict[Scope, list[tuple[int, int]]] = {}
        self._loop_body_nodes: dict[tuple[Loop, type], tuple] = {}
        self._rollouts: dict[Loop, bool] = {}
        self._name_uses: dict[Scope, NameUses] = {}
        self._class_bases_cache: dict[cst.ClassDef, tuple[str, ...]] = {}
        self._step_loops: dict[cst.CSTNode, bool] = {}
        self._eval_mode: dict[Scope, bool] = {}
        self._mode_switches: dict[Scope, tuple[cst.Call, ...]] = {}
        self._step_calls: dict[Scope, list[cst.Call]] = {}
        self._helper_closure_class: dict[cst.FunctionDef, Optional[cst.ClassDef]] = {}
        self.classes_by_name = {c.name.value: c for c in tree.nodes(cst.ClassDef)}
        self.functions_by_name: dict[str, list[cst.FunctionDef]] = {}
        for func in tree.nodes(cst.FunctionDef):
            self.functions_by_name.setdefault(func.name.value, []).append(func)

    # -- where a node is --------------------------------------------------------------
    def function_of(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        # Memoised for every node on the way up: rules ask for most nodes' function, often.
        known = self._function_of
        found = known.get(node, _UNKNOWN)
        if found is not _UNKNOWN:
            return found
        parent = self.tree.parent
        path = [node]
        current = parent.get(node)
        while current is not None and type(current) is not cst.FunctionDef:
            found = known.get(current, _UNKNOWN)
            if found is not _UNKNOWN:
                break
            path.append(current)
            current = parent.get(current)
        else:
            found = current  # the innermost function above, or None at the module
        for passed in path:
            known[passed] = found
        return found

    def gives_first_value(self, site: cst.CSTNode, name: str) -> bool:
        """``if h is None: h = init()`` (``if not isinstance(h, torch.Tensor):``) gives the first
        value, and ``if h.size(1) != x.size(0): h = init(x.size(0))`` one for a new batch size:
        neither cuts the chain (nor empties a total: ``if total is None: total = loss``) on the
        other iterations."""
        for ancestor in self.tree.ancestors(site):
            if type(ancestor) is cst.If:
                # ``if h is None or h.size(1) != batch_size:`` (re)starts the chain: any of its conditions
                return any(_tests_first_value(condition, name) or self._tests_first_call(condition, ancestor)
                           for condition in _alternatives(ancestor.test))
            if isinstance(ancestor, (cst.For, cst.While, cst.FunctionDef)):
                return False
        return False

    def _tests_first_call(self, test: cst.BaseExpression, branch: cst.If) -> bool:
        """``if self.val is None:`` in a method whose body then sets ``self.val`` on every call (a
        running meter's ``update``): true on its first call only."""
        sentinel = _tested_for_none(test)
        function = self.function_of(branch)
        if sentinel is None or function is None or self.tree.parent.get(branch) is not function.body:
            return False
        return any(self.tree.parent.get(self.tree.parent.get(assign)) is function.body
                   and not (isinstance(assign.value, cst.Name) and assign.value.value == "None")
                   and any(carried_name(t.target) == sentinel for t in assign.targets)
                   for assign in self.scope_nodes(function, cst.Assign))

    def scope_of(self, node: cst.CSTNode) -> Scope:
        return self.function_of(node) or self.tree.module

    def class_of(self, func: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The class ``func`` is a method of (directly in the class body)."""
        parent = self.tree.parent.get(func)
        if isinstance(parent, cst.IndentedBlock):
            parent = self.tree.parent.get(parent)
        return parent if isinstance(parent, cst.ClassDef) else None

    def self_class(self, func: Optional[cst.FunctionDef]) -> Optional[cst.ClassDef]:
        """The class whose instance ``self`` is in ``func``: the class of a method, or, for a
        function outside any class whose first parameter is ``self`` (a method's body moved out:
        ``compute_step(self, x)``), the one class whose methods call it with their ``self``."""
        if func is None:
            return None
        cls = self.class_of(func)
        if cls is not None:
            return cls
        params = func.params.params
        if not params or params[0].name.value != "self":
            return self._class_of_helper_closure(func)
        return self._classes_handing_self.get(func.name.value)

    def _class_of_helper_closure(self, func: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """``def _feature_extraction(loader): ... self.extract_features(x)`` inside a method that
        calls it: ``self`` is the method's, and the helper runs as part of it. (Not a closure
        handed on as a hook or callback: that runs on another schedule than its method's.)"""
        known = self._helper_closure_class.get(func, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        found = None
        enclosing = self.function_of(func)
        own = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
        if enclosing is not None and all(p.name.value != "self" for p in own) and any(
                type(call.func) is cst.Name and call.func.value == func.name.value
                for call in self.tree.descendants(enclosing, cst.Call)):
            found = self.self_class(enclosing)
        self._helper_closure_class[func] = found
        return found

    @cached_property
    def _classes_handing_self(self) -> dict[str, Optional[cst.ClassDef]]:
        """For each function of the file named in a ``name(self, ...)`` call made from a method,
        the class of the calling methods (None where methods of several classes call it)."""
        taking_self = {name for name, functions in self.functions_by_name.items()
                       if any(f.params.params and f.params.params[0].name.value == "self" for f in functions)}
        found: dict[str, Optional[cst.ClassDef]] = {}
        if not taking_self:
            return found
        for call in self.tree.nodes(cst.Call):
            func, args = call.func, call.args
            if type(func) is cst.Name and func.value in taking_self and args and \
                    type(args[0].value) is cst.Name and args[0].value.value == "self" and args[0].keyword is None:
                caller = self.function_of(call)
                cls = self.class_of(caller) if caller is not None else None
                if cls is not None:
                    found[func.value] = cls if found.get(func.value, cls) is cls else None
        return found

    def loops_around(self, node: cst.CSTNode, comprehensions: bool = False) -> list:
        """Loops enclosing ``node`` in its own function, innermost first (a loop's body only,
        not its header: the iterable of ``for x in f(y)`` runs once); with ``comprehensions``,
        also the comprehensions whose element (a dict's key or value) holds it."""
        loops: list = []
        child = node
        scopes, loop_types = _node_types("scope"), _node_types("loop")
        for ancestor in self.tree.ancestors(node):
            ancestor_type = type(ancestor)
            if ancestor_type in scopes:
                break
            if ancestor_type in loop_types and child is ancestor.body:
                loops.append(ancestor)
            elif comprehensions and (
                    isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.GeneratorExp)) and child is ancestor.elt
                    or isinstance(ancestor, cst.DictComp) and child in (ancestor.key, ancestor.value)):
                loops.append(ancestor)
            child = ancestor
        return loops

    def loop_body_nodes(self, loop: Loop, node_type: type) -> tuple:
        """Nodes of a type inside the loop's body, outside nested functions and classes (once per
        loop and type, as ``scope_nodes``)."""
        key = (loop, node_type)
        found = self._loop_body_nodes.get(key)
        if found is None:
            found = self._loop_body_nodes[key] = tuple(
                n for n in self.tree.descendants(loop.body, node_type) if self._same_function(n, loop))
        return found

    def name_uses(self, scope: Scope) -> NameUses:
        """``NameUses`` of ``scope`` (once per scope: asked for each list a rule looks at)."""
        known = self._name_uses.get(scope)
        if known is not None:
            return known
        torch_arguments = {a.value.value for call in self.scope_nodes(scope, cst.Call)
                           if (self.imports.qualify(call.func) or "").startswith("torch.")
                           for a in call.args if isinstance(a.value, cst.Name)}
        elements: dict[str, set[str]] = {}
        for iteration in (*self.scope_nodes(scope, cst.For), *self.scope_nodes(scope, cst.CompFor)):
            if isinstance(iteration.iter, cst.Name):
                elements.setdefault(iteration.iter.value, set()).update(
                    n.value for n in self.tree.descendants(iteration.target, cst.Name))
        receivers, item_receivers = set(), set()
        for attribute in self.scope_nodes(scope, cst.Attribute):
            receiver = attribute.value
            if isinstance(receiver, cst.Name):
                receivers.add(receiver.value)
            elif isinstance(receiver, cst.Subscript) and isinstance(receiver.value, cst.Name):
                item_receivers.add(receiver.value.value)
        known = self._name_uses[scope] = NameUses(
            frozenset(torch_arguments), {name: frozenset(found) for name, found in elements.items()},
            frozenset(receivers), frozenset(item_receivers))
        return known

    def steps_environment_in(self, loop: Loop) -> bool:
        """A rollout loop: its body steps an environment (``env.step(action)``); once per loop."""
        known = self._rollouts.get(loop)
        if known is None:
            known = self._rollouts[loop] = any(steps_an_environment(c) for c in self.loop_body_nodes(loop, cst.Call))
        return known

    def _same_function(self, node: cst.CSTNode, anchor: cst.CSTNode) -> bool:
        return self.function_of(node) is self.function_of(anchor)

    def scope_nodes(self, scope: Scope, node_type: type) -> tuple:
        """Nodes of a type in a function (or module) body, outside nested functions, in source
        order. Asked per node by many rules (once per scope and type here, or a long function
        costs its length at each ask)."""
        key = (scope, node_type)
        found = self._scope_nodes.get(key)
        if found is None:
            found = self._scope_nodes[key] = self._outside_nested_functions(scope, self.tree.descendants(scope, node_type))
        return found

    def _outside_nested_functions(self, scope: Scope, nodes: list) -> tuple:
        """``nodes`` (in source order, inside ``scope``) less those inside a function nested in
        ``scope`` (its header and body: where ``function_of`` gives that function), by the
        preorder ranges of the nested functions rather than one walk up per node."""
        start = self.tree.start
        ranges = self._nested_function_ranges(scope)
        if not ranges:
            return tuple(node for node in nodes if node is not scope)  # (a function is in its parent's scope)
        kept, at = [], 0
        for node in nodes:
            index = start[node]
            if node is scope:
                continue
            while at < len(ranges) and ranges[at][1] < index:
                at += 1
            if at == len(ranges) or not ranges[at][0] < index:
                kept.append(node)
        return tuple(kept)

    def _nested_function_ranges(self, scope: Scope) -> list[tuple[int, int]]:
        """The preorder ranges (start, end] of the outermost functions nested in ``scope``; once
        per scope (asked for each node type of it)."""
        known = self._nested_ranges.get(scope)
        if known is None:
            start, last = self.tree.start, self.tree.last
            known = self._nested_ranges[scope] = []
            for func in self.tree.descendants(scope, cst.FunctionDef):
                if func is not scope and (not known or start[func] > known[-1][1]):
                    known.append((start[func], last[start[func]]))
        return known

    # -- classes ----------------------------------------------------------------------
    def class_bases(self, cls: cst.ClassDef, _seen: frozenset = frozenset()) -> tuple[str, ...]:
        """Qualified (or plain dotted) names of a class's bases, following classes of this file."""
        cached = self._class_bases_cache.get(cls)
        if cached is not None:
            return cached
        names: list[str] = []
        for arg in cls.bases:
            name = self.imports.qualify(arg.value) or dotted_name(arg.value)
            if name is None:
                continue
            names.append(name)
            local = self.classes_by_name.get(name)
            if local is not None and local is not cls and local.name.value not in _seen:
                names.extend(self.class_bases(local, _seen | {cls.name.value}))
        result = tuple(names)
        self._class_bases_cache[cls] = result
        return result

    def is_lightning_module(self, cls: Optional[cst.ClassDef]) -> bool:
        return cls is not None and any(b.endswith(LIGHTNING_BASE) for b in self.class_bases(cls))

    def is_torch_module_class(self, cls: Optional[cst.ClassDef]) -> bool:
        """An ``nn.Module`` subclass: by its bases, or, where a base comes from another module
        (``class IterativeNATransformerModel(NATransformerModel)``), one named as a model class
        (``MODEL_CLASS_SUFFIXES``) under a class of this file that defines ``forward``."""
        if cls is None:
            return False
        bases = self.class_bases(cls)
        if any(b in MODULE_BASES or b.endswith(LIGHTNING_BASE) or b in ("nn.Module", "Module") for b in bases):
            return True
        lineage = [cls, *(self.classes_by_name[b] for b in bases if b in self.classes_by_name)]
        foreign = [b for b in bases if b not in self.classes_by_name]
        return bool(foreign) and (any(b.rpartition(".")[2].endswith(MODEL_CLASS_SUFFIXES) for b in foreign)
                                  or cls in self._classes_registering_buffers) and any(
            self.class_of(forward) in lineage for forward in self.functions_by_name.get("forward", ()))

    @cached_property
    def _classes_registering_buffers(self) -> frozenset[cst.ClassDef]:
        """The classes with ``self.register_buffer(...)`` in a method: only a module has buffers.
        (Found once per file: whether a class is a module is asked for each of its methods.)"""
        found: set[cst.ClassDef] = set()
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("register_buffer", "register_parameter") \
                    and isinstance(func.value, cst.Name) and func.value.value == "self":
                found.update(a for a in self.tree.ancestors(call) if isinstance(a, cst.ClassDef))
        return frozenset(found)

    def is_per_step_method(self, func: cst.FunctionDef) -> bool:
        cls = self.class_of(func)
        if cls is None:
            return False
        name = func.name.value
        if name == "forward":
            return self.is_torch_module_class(cls)
        if name in TRAINER_CALLBACK_STEP_METHODS:
            return any(base.rsplit(".", 1)[-1] == "TrainerCallback" for base in self.class_bases(cls))
        if name == "backward":  # a LightningModule's ``backward(self, loss)`` hook runs once per step
            return self.is_lightning_module(cls)
        return name in PER_STEP_METHODS

    # -- iteration --------------------------------------------------------------------
    def iteration_scope(self, node: cst.CSTNode) -> Optional[Union[Loop, cst.FunctionDef]]:
        """The innermost loop around ``node`` in its function, else its per-step method."""
        loops = self.loops_around(node)
        if loops:
            return loops[0]
        func = self.function_of(node)
        if func is not None and self.is_per_step_method(func):
            return func
        return None

    def is_step_loop(self, loop: Loop) -> bool:
        """A loop that runs one training/evaluation step per iteration (over a loader, over
        epochs or steps, or doing a backward/optimizer step), as opposed to a loop over a few
        layers or loss terms inside one step, whose lists die with the step."""
        cached = self._step_loops.get(loop)
        if cached is None:
            cached = self._step_loops[loop] = self._is_step_loop(loop)
        return cached

    def _steps_through_time_of_a_batch(self, loop: Loop) -> bool:
        """The loop's variable indexes a tensor past its first, whole dimension (``dec_batch[:, t]``,
        ``frames[:, :, t]``): the loop walks the time steps (positions) of one batch, as a
        teacher-forced decoder does, not the batches of a data set."""
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name)):
            return False
        name = loop.target.value
        for subscript in self.loop_body_nodes(loop, cst.Subscript):
            elements = subscript.slice
            if len(elements) >= 2 and _whole_dimension(elements[0].slice) and any(
                    isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Name) and e.slice.value.value == name
                    for e in elements[1:]):
                return True
        return False

    def _is_step_loop(self, loop: Loop) -> bool:
        if isinstance(loop, cst.For) and isinstance(loop.iter, (cst.Name, cst.Call)) and \
                any(LOSS_TERMS.match(identifier) for identifier in iterable_identifiers(loop.iter)):
            return False  # the loss terms of one step (a backward per head), not steps
        calls = self.loop_body_nodes(loop, cst.Call)
        if any(is_step_call(call) or steps_an_environment(call) for call in calls):
            return True
        if self.step_follows(loop):
            return False  # micro-batches, domains or heads of ONE step, differentiated after the loop
        if self._steps_through_time_of_a_batch(loop):
            return False  # ``for t in range(steps): x_t = embeds(dec_batch[:, t])``: one batch's time steps
        if isinstance(loop, cst.For) and isinstance(loop.iter, (cst.List, cst.Tuple)) and \
                not any(isinstance(element, cst.StarredElement) for element in loop.iter.elements):
            return False  # ``for p in [prompt, negative_prompt]``: as many iterations as the source names
        if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and not loop.iter.args and \
                isinstance(loop.iter.func, cst.Attribute) and loop.iter.func.attr.value == "items" and \
                not any(_runs_a_model(call) for call in calls):
            return False  # ``for key, value in self.data.items()``: the fields of one mapping
        header = loop.iter if isinstance(loop, cst.For) else loop.test
        if isinstance(header, cst.Call) and terminal_name(header.func) in ("linspace", "logspace"):
            return False  # a sweep over values (``for w in torch.linspace(0, 1, steps)``), not over steps
        if isinstance(loop, cst.For) and self._iterates_fields_of_outer_item(loop):
            return False
        identifiers = iterable_identifiers(header)
        if isinstance(loop, cst.For):
            identifiers += self._bound_iterable_identifiers(loop)
            stop = _strided_stop(loop.iter, BATCH_STRIDE)
            if stop is not None and _is_len_call(stop):
                return True  # ``for start in range(0, len(texts), batch_size)``: one batch of data per iteration
        if isinstance(loop, cst.While) and (self._collects_until_enough(loop, calls) or self._fetches_batches(loop)):
            return True
        if self.in_model_method(loop) or self.in_generation_function(loop) or self._in_post_processing(loop) or \
                self._in_pipeline_method(loop):
            # A model's own ``forward``/``generate``/``sample`` (or a generator's ``generate``, an
            # inference pipeline's helpers) loops over time steps, tokens, layers or the inputs of
            # one call; only a loop over data makes steps there (``predict(loader)``).
            return isinstance(loop, cst.For) and any(LOADER_ITERABLE.search(i) for i in identifiers) and \
                not self._iterates_pieces_of_a_tensor(loop)
        if isinstance(loop, cst.For) and self._iterates_outer_results(loop):
            return False
        if any(is_step_identifier(identifier) for identifier in identifiers):
            return True
        if isinstance(loop, cst.For) and self._iterates_pieces_of_a_tensor(loop) and \
                not any(_runs_a_model(call) for call in self.loop_body_nodes(loop, cst.Call)):
            return False  # the rows of one batch made into data (``for batch_index in range(images.shape[0])``)
        if isinstance(loop, cst.For):  # ``for epoch in range(100)``, ``for i, batch in enumerate(...)``
            if any(is_step_target(target.value) for target in self.tree.descendants(loop.target, cst.Name)):
                return True
        if isinstance(loop, cst.While) and isinstance(loop.test, cst.Name) and loop.test.value == "True" and \
                not any(self.is_step_loop(outer) for outer in self.loops_around(loop)):
            return True  # ``while True:`` training loops run until a break (inside a loop over
            # data it is a per-sample search, e.g. beam search, unless it has step calls)
        return isinstance(loop, cst.For) and self.evaluates_each_element(loop)

    def _fetches_batches(self, loop: cst.While) -> bool:
        """``while batch is not None:`` whose body fetches the next one (``batch =
        self.batcher.next_batch()``): one batch of data per iteration."""
        names = {n.value for n in self.tree.descendants(loop.test, cst.Name) if is_step_target(n.value)}
        return bool(names) and any(isinstance(t.target, cst.Name) and t.target.value in names and isinstance(a.value, cst.Call)
                                   for a in self.loop_body_nodes(loop, cst.Assign) for t in a.targets)

    def _collects_until_enough(self, loop: cst.While, calls: list[cst.Call]) -> bool:
        """``while len(all_images) * batch_size < num_samples:`` around a model run whose results
        the body adds to ``all_images``: one batch of outputs per iteration, until a budget of
        examples (not ``while len(tokens) < max_len:``, one token of one sequence at a time)."""
        counted = {arg.value.value for call in self.tree.descendants(loop.test, cst.Call)
                   if dotted_name(call.func) == "len" and len(call.args) == 1
                   for arg in call.args if isinstance(arg.value, cst.Name)}
        budget = any(_EXAMPLE_COUNT.search(name.value) for name in self.tree.descendants(loop.test, cst.Name)
                     if name.value not in counted)
        return bool(counted) and budget and any(_runs_a_model(call) for call in calls) and any(
            isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "extend")
            and dotted_name(call.func.value) in counted for call in calls)

    def indexes_a_dataset(self, loop: Loop) -> bool:
        """The body assigns a dataset's item at the loop's target (``ex, lbl = dset[idx]``,
        ``sample = self.dataset[i]``): one example per iteration, as many as the dataset has
        (not a step loop: a batch gathered for one use is kept on purpose, only its growth by
        concatenation costs)."""
        if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
            return False
        target = loop.target.value
        return any(isinstance(s := assign.value, cst.Subscript) and len(s.slice) == 1 and
                   isinstance(index := s.slice[0].slice, cst.Index) and
                   isinstance(index.value, cst.Name) and index.value.value == target and
                   DATASET_NAME.search(terminal_name(s.value) or "") is not None
                   for assign in self.loop_body_nodes(loop, cst.Assign))

    def chunks_a_tensor(self, loop: Loop) -> bool:
        """``for begin in range(0, n, chunk_size)`` where ``n`` is ``x.shape[0]``, ``x.size(0)``,
        ``len(x)`` or a name bound to one of them, or a loop over a tensor's pieces (below): as
        many iterations as the tensor (a data set, or a batch chunked to bound the peak) has chunks."""
        stop = _strided_stop(loop.iter, CHUNK_STRIDE) if isinstance(loop, cst.For) else None
        if stop is not None:
            stop = self._single_value(stop, loop)
        return stop is not None and (_is_len_call(stop) or _first_dimension(stop)) or \
            isinstance(loop, cst.For) and self._iterates_pieces_of_a_tensor(loop)

    def sets_eval_mode(self, scope: Scope) -> bool:
        """Whether ``scope`` puts something in evaluation mode (``model.eval()``): evaluation code.
        (Asked for each loop of a function: answered once per function.)"""
        known = self._eval_mode.get(scope)
        if known is None:
            known = self._eval_mode[scope] = any(
                c.func.attr.value == "eval" and not c.args for c in self.mode_switches(scope))
        return known

    def mode_switches(self, scope: Scope) -> tuple[cst.Call, ...]:
        """``x.eval()`` and ``x.train(...)`` calls of ``scope``, in source order (a handful, where
        a scope may hold thousands of calls)."""
        known = self._mode_switches.get(scope)
        if known is None:
            known = self._mode_switches[scope] = tuple(
                c for c in self.scope_nodes(scope, cst.Call)
                if isinstance(c.func, cst.Attribute) and c.func.attr.value in ("eval", "train"))
        return known

    def switched_to_a_mode(self, func: cst.Name, training_too: bool = False) -> bool:
        """``net.eval()`` or ``net.train(False)`` (with ``training_too``, also ``net.train()``)
        earlier in this scope or one around it (a closure reading the name): only a module has a
        mode, whatever factory made ``net``. (Not ``tokenizer.train(files)``: a mode is no argument
        or one flag.)"""
        scope: Optional[cst.CSTNode] = self.scope_of(func)
        while scope is not None:
            for switch in self.mode_switches(scope):
                receiver = switch.func.value
                if isinstance(receiver, cst.Name) and receiver.value == func.value and self.tree.before(switch, func) \
                        and (to_eval_mode(switch) or training_too and _sets_training_mode(switch)):
                    return True
            scope = None if scope is self.tree.module else self.scope_of(self.tree.parent[scope])
        return False

    def is_evaluation_code(self, scope: Scope) -> bool:
        """A function (or a script) that puts a model in eval mode, or a function named for
        evaluation (``evaluate``, ``test_model``, ``run_validation``)."""
        return self.sets_eval_mode(scope) or isinstance(scope, cst.FunctionDef) and \
            EVAL_FUNCTION.search(scope.name.value) is not None

    def evaluates_each_element(self, loop: cst.For) -> bool:
        """``for chunk in load_chunks(path): scores = model(chunk)`` in evaluation code (a function,
        or a script, that puts a model in eval mode, or a function named for evaluation): each
        iteration runs a model on its element (or hands both to a helper), one evaluation step,
        whatever the iterable is called; a model is named for one, or switched to a mode here
        (``embedding.eval()``). (A loop over layers calls its element, it does not hand it to a
        model.)"""
        scope = self.scope_of(loop)
        if not self.is_evaluation_code(scope) or any(
                self.is_step_loop(outer) for outer in self.loops_around(loop) if outer is not loop):
            return False  # (inside a loop over data: the items of one step, crops of one image)
        elements = {name.value for name in self.tree.descendants(loop.target, cst.Name)}
        # ``for user_id in pairs[0].unique().tolist(): u = users_emb[user_id]``: ids drawn from the
        # data, each picking its sample's row (not ``range(seq_len)``'s time steps of one input)
        by_id = _iterates_ids(loop)
        for assign in self.loop_body_nodes(loop, cst.Assign):  # ``img = preprocess(load(path))``
            # (not ``h = layer(h)``: the element called, on what the loop carries)
            if any(name.value in elements and (not self._in_index(name, assign.value) or
                                               by_id and self._picks_a_row(name)) and not self._called(name)
                   for name in self.tree.descendants(assign.value, cst.Name)):
                elements.update(name.value for t in assign.targets for name in self.tree.descendants(t.target, cst.Name))
        # (over the rows of a tensor, ``model(X_test[i:i + 1])``: the element is the row the index
        # picks; not ``decoder(tokens[:, :i + 1])``, the prefixes of one sequence)
        picks_rows = self._iterates_pieces_of_a_tensor(loop)
        return any(
            (_runs_a_model(call) or isinstance(call.func, cst.Name) and self.switched_to_a_mode(call.func)
             or any(isinstance(arg.value, cst.Name) and self.switched_to_a_mode(arg.value) for arg in call.args))
            and any(root_name(arg.value, through_any_method=True) in elements or picks_rows and
                    isinstance(arg.value, cst.Subscript) and any(
                        name.value in elements for name in self.tree.descendants(arg.value.slice[0], cst.Name))
                    for arg in call.args)
            for call in self.loop_body_nodes(loop, cst.Call))

    def _called(self, name: cst.Name) -> bool:
        parent = self.tree.parent.get(name)
        return isinstance(parent, cst.Call) and parent.func is name

    def _picks_a_row(self, name: cst.Name) -> bool:
        """``name`` is the whole first index of a subscript (``emb[user_id]``)."""
        element = self.tree.parent.get(self.tree.parent.get(name))
        subscript = self.tree.parent.get(element)
        return isinstance(element, cst.SubscriptElement) and isinstance(subscript, cst.Subscript) and \
            subscript.slice[0] is element

    def _in_index(self, name: cst.Name, within: cst.CSTNode) -> bool:
        """``name`` is (part of) an index (``x[:, i:i + 1]``): a position, not the data."""
        return self.tree.under(name, cst.SubscriptElement, within)

    def _iterates_outer_results(self, loop: cst.For) -> bool:
        """``for data_i in data:`` where ``data`` is made in the body of the loop around it from
        that iteration's results (a batch's model outputs, filtered): the items of one step, not
        steps. A loader made anew there (``loader = make_loader(epoch)``) still makes steps."""
        if not isinstance(loop.iter, cst.Name):
            return False
        outer = [o for o in self.loops_around(loop) if o is not loop]
        bindings = self.reaching_bindings(loop.iter.value, loop)
        return bool(outer) and bool(bindings) and all(
            b.value is not None and self.tree.contains(outer[0].body, b.node) and not any(
                LOADER_ITERABLE.search(n.value) for n in self.tree.descendants(b.value, cst.Name))
            for b in bindings)

    def _iterates_fields_of_outer_item(self, loop: cst.For) -> bool:
        """``for key, value in data.items():`` where ``data`` is the item of a loop around it (a
        batch's fields, moved to the device one by one), not a loader."""
        iterable = loop.iter
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)
                and iterable.func.attr.value in ("items", "keys", "values") and isinstance(iterable.func.value, cst.Name)):
            return False
        name = iterable.func.value.value
        return any(isinstance(outer, cst.For) and outer is not loop and
                   any(n.value == name for n in self.tree.descendants(outer.target, cst.Name))
                   for outer in self.loops_around(loop))

    def _bound_iterable_identifiers(self, loop: cst.For) -> list[str]:
        """What a named iterable was made from (``pbar = tqdm(train_loader)``; ``for b in pbar``)."""
        if not isinstance(loop.iter, cst.Name):
            return []
        return [identifier for binding in self.reaching_bindings(loop.iter.value, loop)
                if isinstance(binding.value, cst.Call) for identifier in iterable_identifiers(binding.value)]

    def _iterates_pieces_of_a_tensor(self, loop: cst.For) -> bool:
        """``for part in torch.split(x, n)`` (``x.chunk(k)``, or a name bound to one), or
        ``for i in range(n_batches)`` with ``n_batches = rays.shape[1] // size``: the pieces of an
        input already in memory, however the iterable is named (``face_batches``)."""
        iterable = loop.iter
        while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("enumerate", "tqdm", "tqdm.tqdm") \
                and iterable.args:
            iterable = iterable.args[0].value
        iterable = self._single_value(iterable, loop)
        if not isinstance(iterable, cst.Call):
            return False
        if terminal_name(iterable.func) in TENSOR_PIECES:
            return True
        return dotted_name(iterable.func) == "range" and any(self._counted_from_a_shape(arg.value, loop)
                                                             for arg in iterable.args)

    def _single_value(self, expr: cst.BaseExpression, at: cst.CSTNode) -> cst.BaseExpression:
        """What a name is bound to where only one binding, not an unpacking, reaches ``at`` (else
        the expression itself)."""
        if isinstance(expr, cst.Name):
            bindings = self.reaching_bindings(expr.value, at)
            if len(bindings) == 1 and bindings[0].value is not None and bindings[0].index is None:
                return bindings[0].value
        return expr

    def _counted_from_a_shape(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
        """``x.shape[1] // size``, ``x.size(0)``, or names bound to one (``_, _, frames, h, w =
        x.shape``; ``n = 1 + (frames - 1) // 4``): a count taken from a tensor's dimensions."""
        if any(a.attr.value == "shape" or a.attr.value == "size" and isinstance(self.tree.parent.get(a), cst.Call)
               for a in self.tree.descendants(expr, cst.Attribute)):
            return True
        if depth >= 2:
            return False
        for name in self.tree.descendants(expr, cst.Name):
            bindings = self.reaching_bindings(name.value, at)
            if len(bindings) == 1 and bindings[0].value is not None and \
                    self._counted_from_a_shape(bindings[0].value, bindings[0].node, depth + 1):
                return True
        return False

    def _in_post_processing(self, node: cst.CSTNode) -> bool:
        """In ``post_process_instance_segmentation(outputs, ...)``: its loops go over the items
        of one batch's outputs (``for scores, labels in zip(...)``), not over steps."""
        func = self.function_of(node)
        return func is not None and POST_PROCESSING_FUNCTION.search(func.name.value) is not None

    def in_generation_function(self, node: cst.CSTNode) -> bool:
        func = self.function_of(node)
        return func is not None and GENERATION_FUNCTION.search(func.name.value) is not None

    def in_inference_function(self, node: cst.CSTNode) -> bool:
        func = self.function_of(node)
        return func is not None and INFERENCE_FUNCTION.search(func.name.value) is not None

    def of_module_class(self, func: Optional[cst.FunctionDef]) -> bool:
        """``self`` in ``func`` is an ``nn.Module``: a method of a module class (a LightningModule
        included), or a method's body moved out of one (``self_class``)."""
        return self.is_torch_module_class(self.self_class(func))

    def is_model_method(self, func: Optional[cst.FunctionDef]) -> bool:
        """A method of a model: of an ``nn.Module`` class that is not a LightningModule (whose
        step methods are the framework's training and evaluation code)."""
        return self.of_module_class(func) and not self.is_lightning_module(self.self_class(func))

    def in_model_method(self, node: cst.CSTNode) -> bool:
        """In a method of a model other than a framework's per-step hook."""
        func = self.function_of(node)
        return func is not None and func.name.value not in PER_STEP_METHODS and self.is_model_method(func)

    def _in_pipeline_method(self, node: cst.CSTNode) -> bool:
        """In a method of an inference pipeline class (diffusers' ``DiffusionPipeline``,
        transformers' ``Pipeline``): one call's inputs, made into one call's outputs."""
        func = self.function_of(node)
        cls = self.class_of(func) if func is not None else None
        return cls is not None and any(b.rpartition(".")[2].endswith("Pipeline") for b in self.class_bases(cls))

    def step_follows(self, loop: Loop) -> bool:
        """A backward or optimizer step after ``loop`` in its function, at the same loop depth
        (not inside a later loop of its own)."""
        outer = self.loops_around(loop)
        scope = self.scope_of(loop)
        steps = self._step_calls.get(scope)
        if steps is None:  # (once per scope: asked of each loop of a function of thousands)
            steps = self._step_calls[scope] = [c for c in self.scope_nodes(scope, cst.Call) if is_step_call(c)]
        return any(self.tree.start[call] > self.tree.end(loop) and self.loops_around(call) == outer for call in steps)

    # -- bindings ---------------------------------------------------------------------
    def bindings(self, scope: Scope) -> dict[str, list[Binding]]:
        """Every binding of each name in a function (or module) body, in source order."""
        cached = self._bindings.get(scope)
        if cached is not None:
            return cached
        result: dict[str, list[Binding]] = {}

        def add(target: cst.BaseExpression, node: cst.CSTNode, value, augmented=False, index=None) -> None:
            if isinstance(target, cst.Name):
                result.setdefault(target.value, []).append(Binding(target.value, node, value, augmented, index))
            elif isinstance(target, (cst.Tuple, cst.List)):
                values = None
                if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
                    values = [e.value for e in value.elements]
                for i, element in enumerate(target.elements):
                    if values:
                        add(element.value, node, values[i], augmented)
                    else:
                        add(element.value, node, value, augmented, i if index is None else None)
            elif isinstance(target, cst.StarredElement):
                add(target.value, node, value, augmented)

        if isinstance(scope, cst.FunctionDef):
            params = scope.params
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                add(param.name, param, None)
            for star in (params.star_arg, params.star_kwarg):
                if isinstance(star, cst.Param):
                    add(star.name, star, None)
        for assign in self.scope_nodes(scope, cst.Assign):
            for target in assign.targets:
                add(target.target, assign, assign.value)
        for assign in self.scope_nodes(scope, cst.AnnAssign):
            add(assign.target, assign, assign.value)
        for assign in self.scope_nodes(scope, cst.AugAssign):
            add(assign.target, assign, assign.value, augmented=True)
        for loop in self.scope_nodes(scope, cst.For):
            add(loop.target, loop, None)
        for item in self.scope_nodes(scope, cst.WithItem):
            if item.asname is not None:
                add(item.asname.name, item, item.item)
        for walrus in self.scope_nodes(scope, cst.NamedExpr):
            add(walrus.target, walrus, walrus.value)
        for names in result.values():
            names.sort(key=lambda b: self.tree.start[b.node])
        self._bindings[scope] = result
        return result

    def reaching_bindings(self, name: str, at: cst.CSTNode) -> list[Binding]:
        """The bindings of ``name`` that may give its value at ``at``: the last plain one before
        it (with the augmented ones after that), or, failing that, those later in an enclosing
        loop (they reach ``at`` on the next iteration). Memoised: half the asks repeat one (the
        rules and the flow ask of the same names at the same statements)."""
        key = (name, at)
        known = self._reaching.get(key)
        if known is None:
            known = self._reaching[key] = self._reaching_bindings(name, at)
        return known

    def _reaching_bindings(self, name: str, at: cst.CSTNode) -> list[Binding]:
        scope = self.scope_of(at)
        candidates = self.bindings(scope).get(name, [])
        if not candidates:
            return []
        # The candidates are in source order: binary-search them rather than scan them all (a
        # name bound in each of thousands of loops of one function is asked about in each).
        start = self.tree.start
        position = start[at]
        node_start = lambda binding: start[binding.node]  # noqa: E731
        reaching: list[Binding] = []
        overwritten_in: set[cst.CSTNode] = set()  # branches where a later plain binding was taken
        for index in range(bisect_left(candidates, position, key=node_start) - 1, -1, -1):
            binding = candidates[index]
            if self.tree.contains(binding.node, at) and not (
                    isinstance(binding.node, cst.For) and self.tree.contains(binding.node.body, at)):
                continue  # ``x = f(x)`` binds after reading (a loop's own target binds before)
            branch = self._innermost_branch(binding.node)
            if branch in overwritten_in:
                continue  # ``x = a`` then ``x = b`` in one branch: only ``b`` leaves it
            reaching.append(binding)
            if not binding.augmented and self._overwritten_on_every_path(binding.node, branch, at, overwritten_in, name):
                break
        if reaching:
            return reaching
        for loop in self.loops_around(at):
            body = start[loop.body]
            first = bisect_left(candidates, body, key=node_start)
            later = candidates[first:bisect_right(candidates, self.tree.last[body], key=node_start)]
            if later:
                return later
        return []

    def returns_name(self, scope: Scope, name: str) -> bool:
        """Some ``return`` of ``scope`` hands back the name itself (``return handles``)."""
        return any(isinstance(r.value, cst.Name) and r.value.value == name for r in self.scope_nodes(scope, cst.Return))

    def only_a_parameter(self, name: str, scope: Optional[Scope]) -> bool:
        """``scope`` binds ``name`` as a parameter and nowhere else: what the caller handed in."""
        bindings = self.bindings(scope).get(name) if scope is not None else None
        return bool(bindings) and all(isinstance(b.node, cst.Param) for b in bindings)

    def handed_in(self, name: str, scope: Optional[Scope]) -> bool:
        """``scope`` binds ``name`` as a parameter and otherwise only to the same object through
        methods that return the module they are called on (``tgn = tgn.train()``,
        ``model = model.to(device)``): what the caller handed in."""
        bindings = self.bindings(scope).get(name) if scope is not None else None
        return bool(bindings) and any(isinstance(b.node, cst.Param) for b in bindings) and all(
            isinstance(b.node, cst.Param) or isinstance(b.node, cst.Assign) and b.index is None and not b.augmented
            and b.value is not module_itself(b.value) and isinstance(module_itself(b.value), cst.Name)
            and module_itself(b.value).value == name for b in bindings)

    def sole_parameter(self, name: str, scope: Optional[Scope]) -> Optional[cst.Param]:
        """The parameter ``name`` where ``scope`` binds it only as one (``only_a_parameter``)."""
        return self.bindings(scope)[name][0].node if self.only_a_parameter(name, scope) else None

    def is_parameter(self, name: str, at: cst.CSTNode) -> bool:
        """At ``at``, ``name`` can only be the parameter of that name (never rebound before)."""
        bindings = self.bindings_of(name, at)
        return len(bindings) == 1 and isinstance(bindings[0].node, cst.Param)

    def bindings_of(self, name: str, at: cst.CSTNode) -> list[Binding]:
        """What ``name`` may be bound to at ``at``: its reaching bindings in its own function,
        else, for a name that function never binds, those of the functions around it (a
        closure's ``cpu = torch.device("cpu")``), else those at module level."""
        reaching = self.reaching_bindings(name, at)
        if reaching:
            return reaching
        func = self.function_of(at)
        if func is not None and name in self.bindings(func):
            return []  # bound in this function, but only after ``at``
        while func is not None:
            func = self.function_of(func)
            bindings = self.bindings(func if func is not None else self.tree.module).get(name)
            if bindings:
                return bindings
        return []

    def _overwritten_on_every_path(self, binding: cst.CSTNode, branch: Optional[cst.CSTNode], at: cst.CSTNode,
                                   overwritten_in: set, name: str) -> bool:
        """Whether a plain binding (walking back from ``at``) leaves no path on which an earlier
        one reaches ``at``: it is not in a branch that ``at`` is outside of, or it completes an
        ``if``/``elif``/``else`` whose every arm binds the name (``if isinstance(s, list): s =
        [...]`` / ``else: s = s.numpy()``), or an ``if name is not None:`` whose skipped path
        leaves ``None`` (``weights = weights.cpu()`` under it: an earlier value never reaches
        ``at``), and so on outwards. Else its branch joins ``overwritten_in``."""
        while self._in_branch_between(binding, at):
            overwritten_in.add(branch)
            statement = branch if type(branch) is cst.If else self.tree.parent.get(branch)
            while type(self.tree.parent.get(statement)) is cst.If and self.tree.parent[statement].orelse is statement:
                statement = self.tree.parent[statement]  # (an ``elif`` is an ``If`` in its ``orelse``)
            if type(statement) is not cst.If:
                return False
            arms = _if_arms(statement)
            if arms == [statement, None] and _tested_not_none(statement.test) == name:
                arms = [statement]
            if not all(arm in overwritten_in for arm in arms):
                return False
            binding, branch = statement, self._innermost_branch(statement)
        return True

    def _innermost_branch(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        branches = _node_types("branch")
        for ancestor in self.tree.ancestors(node):
            if type(ancestor) in branches:
                return ancestor
        return None

    def _in_branch_between(self, binding: cst.CSTNode, at: cst.CSTNode) -> bool:
        """Whether ``binding`` sits in an if/try/with branch that ``at`` is not inside, so an
        earlier binding may reach ``at`` as well."""
        for ancestor in self.tree.ancestors(binding):
            if self.tree.contains(ancestor, at):
                return False
            if type(ancestor) in _node_types("block"):
                return True
        return False

    def is_bound_in(self, name: str, region: cst.CSTNode, plain_only: bool = True) -> bool:
        scope = self.scope_of(region)
        return any(
            self.tree.contains(region, b.node) and not (plain_only and b.augmented)
            for b in self.bindings(scope).get(name, [])
        )

    def global_names(self, scope: Scope) -> set[str]:
        names: set[str] = set()
        for stmt in self.scope_nodes(scope, cst.Global):
            names.update(n.name.value for n in stmt.names)
        for stmt in self.scope_nodes(scope, cst.Nonlocal):
            names.update(n.name.value for n in stmt.names)
        return names

    # -- what built an object ---------------------------------------------------------
    def classes_built_into(self, receiver: cst.BaseExpression, at: cst.CSTNode) -> list[str]:
        """The callees, spelled, whose calls built ``receiver`` at ``at``: ``meter = AverageMeter()``
        for a name, ``self.meter = AverageMeter()`` anywhere in the file for an attribute of self,
        ``meters.setdefault(key, AverageMeter())``, ``self.policy = Policy().to(device)``; for an
        item (``meters[key]``), what the
        container was filled with: ``defaultdict(AverageMeter)``, ``{k: AverageMeter() for k in keys}``."""
        if isinstance(receiver, cst.Subscript):
            return [name for value in self._values_bound_to(receiver.value, at) for name in _item_classes(value)] + \
                [name for value in self._item_values(receiver.value, at) for name in _built_class(value)]
        if isinstance(receiver, cst.Name):  # ``for learner in learners:`` over ``[Learner(...) for ...]``
            loops = [b.node for b in self.reaching_bindings(receiver.value, at)
                     if isinstance(b.node, cst.For) and isinstance(b.node.target, cst.Name)]
            if loops:
                return [name for loop in loops for value in [loop.iter, *self._values_bound_to(loop.iter, loop)]
                        for name in _item_classes(value)]
        # (``self.policy = ActorCritic(...).to(device)``: the module the calls return is the one built)
        return [name for value in map(module_itself, self._values_bound_to(receiver, at)) if isinstance(value, cst.Call)
                for name in _built_class(value)]

    def _item_values(self, container: cst.BaseExpression, at: cst.CSTNode) -> list[cst.Call]:
        """The calls whose results the file puts into items of ``container`` (``self.meters[key] =
        AverageMeter()`` anywhere in the class for an attribute of self; in the same function for
        a name)."""
        spelled = dotted_name(container)
        if spelled is None or not (spelled.startswith("self.") or isinstance(container, cst.Name)):
            return []
        scope = self.function_of(at)
        return [value for assign in self._item_assignments.get(spelled, ())
                if isinstance(value := module_itself(assign.value), cst.Call)
                and (spelled.startswith("self.") or self.function_of(assign) is scope)]

    @cached_property
    def _item_assignments(self) -> dict[str, list[cst.Assign]]:
        found: dict[str, list[cst.Assign]] = {}
        for assign in self.tree.nodes(cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, cst.Subscript) and (spelled := dotted_name(target.target.value)) is not None:
                    found.setdefault(spelled, []).append(assign)
        return found

    def _values_bound_to(self, receiver: cst.BaseExpression, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """What ``receiver`` may be bound to; each alternative of a default (``self.loss_fn =
        loss_fn if loss_fn is not None else MSELoss()``, ``loss_fn or MSELoss()``) on its own."""
        if isinstance(receiver, cst.Name):  # (``plr = PathRegularization()`` at module level, called in a method)
            values = [b.value for b in self.bindings_of(receiver.value, at) if b.value is not None]
        else:
            spelled = dotted_name(receiver)
            values = self.values_assigned_to(spelled) if spelled is not None and spelled.startswith("self.") else []
        alternatives: list[cst.BaseExpression] = []
        while values:
            value = values.pop()
            if isinstance(value, cst.IfExp):
                values += [value.body, value.orelse]
            elif isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
                values += [value.left, value.right]
            else:
                alternatives.append(value)
        return alternatives[::-1]

    def stored_parameters(self, init: cst.FunctionDef) -> dict[str, str]:
        """``self.<attribute>`` -> the ``__init__`` parameter it is set from, first assignment
        first (``self.encoder = encoder.to(device)``: ``encoder``)."""
        params = parameter_names(init)
        owner = first_param(init)
        stored: dict[str, str] = {}
        for assign in self.scope_nodes(init, cst.Assign):
            for target in assign.targets:
                for attribute, value in assigned_pairs(target.target, assign.value):
                    value = module_itself(value)
                    if isinstance(value, cst.Name) and value.value in params and \
                            isinstance(attribute, cst.Attribute) and dotted_name(attribute.value) == owner:
                        stored.setdefault(attribute.attr.value, value.value)
        return stored

    def key_of(self, subscript: cst.Subscript) -> Union[str, int, None]:
        """``subscript_key``, also for a module constant bound once to a literal
        (``Y_PRED = "y_pred"``, then ``state[Y_PRED]``)."""
        key = subscript_key(subscript)
        elements = subscript.slice
        if key is not None or len(elements) != 1 or not isinstance(elements[0].slice, cst.Index):
            return key
        index = elements[0].slice.value
        if not isinstance(index, cst.Name) or index.value in self.bindings(self.scope_of(subscript)):
            return None
        bindings = self.bindings(self.tree.module).get(index.value, [])
        return literal_key(bindings[0].value) if len(bindings) == 1 else None

    def values_assigned_to(self, spelled: str) -> list[cst.BaseExpression]:
        """What ``<spelled> = value`` statements of the file assign, also as one element of a
        tuple (``self.loss_meter, self.acc_meter = LossMeter(), AccMeter()``)."""
        return list(dict.fromkeys(value for _, value in self._assignments.get(spelled, ())))

    def assignments_to(self, spelled: str) -> list[cst.Assign]:
        """The ``<spelled> = value`` statements of the file, in order (indexed once per file)."""
        return list(dict.fromkeys(assign for assign, value in self._assignments.get(spelled, ())
                                  if isinstance(assign, cst.Assign) and value is assign.value))

    @cached_property
    def _assignments(self) -> dict[str, list[tuple[Union[cst.Assign, cst.AnnAssign], cst.BaseExpression]]]:
        found: dict[str, list[tuple[Union[cst.Assign, cst.AnnAssign], cst.BaseExpression]]] = {}
        for assign in self.tree.nodes(cst.Assign):
            for target in assign.targets:
                for assigned, value in assigned_pairs(target.target, assign.value):
                    if (name := dotted_name(assigned)) is not None:
                        found.setdefault(name, []).append((assign, value))
        for annotated in self.tree.nodes(cst.AnnAssign):  # ``self.batch_metrics: Dict = defaultdict(None)``
            if annotated.value is not None and (name := dotted_name(annotated.target)) is not None:
                found.setdefault(name, []).append((annotated, annotated.value))
        return found


def assigned_pairs(target: cst.BaseExpression, value: cst.BaseExpression) \
        -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """What an assignment binds to what: ``a = v`` as one pair, ``self.a, self.b = a, b``
    element by element (a tuple unpacked from anything else stays one pair)."""
    if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements):
        return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    return [(target, value)]


def _built_class(call: cst.Call) -> list[str]:
    """The class a call builds, spelled: its callee, or the default it may return
    (``meters.setdefault(key, AverageMeter())``, ``meters.get(key, AverageMeter())``)."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("setdefault", "get") and len(call.args) >= 2 and \
            isinstance(call.args[1].value, cst.Call):
        return _built_class(call.args[1].value)
    return [dotted_name(func) or ""]


def _item_classes(container: cst.BaseExpression) -> list[str]:
    """The classes a container's items were built from: ``defaultdict(AverageMeter)``,
    ``{name: AverageMeter() for name in names}``, ``{"loss": AverageMeter(), ...}``,
    ``[Learner(layer) for layer in layers]``, ``[Meter(), Meter()]``."""
    if isinstance(container, cst.Call) and (dotted_name(container.func) or "").rpartition(".")[2] == "defaultdict" \
            and container.args and isinstance(container.args[0].value, (cst.Name, cst.Attribute)):
        return [dotted_name(container.args[0].value) or ""]
    if isinstance(container, cst.Call) and dotted_name(container.func) in ("dict", "OrderedDict", "collections.OrderedDict") \
            and container.args:
        return _item_classes(container.args[0].value)
    if isinstance(container, cst.DictComp) and isinstance(container.value, cst.Call):
        return _built_class(container.value)
    if isinstance(container, (cst.ListComp, cst.GeneratorExp)) and isinstance(container.elt, cst.Call):
        return _built_class(container.elt)
    if isinstance(container, (cst.List, cst.Tuple)):
        return [name for element in container.elements if isinstance(element.value, cst.Call)
                for name in _built_class(element.value)]
    if isinstance(container, cst.Dict):
        return [name for element in container.elements
                if isinstance(element, cst.DictElement) and isinstance(element.value, cst.Call)
                for name in _built_class(element.value)]
    return []


def tests_every_n_steps(test: cst.BaseExpression, tree: Tree) -> bool:
    """An ``if`` test that holds once every N iterations: it takes a count modulo something
    (``step % log_interval == 0``). (Read from the tree's index: LibCST's ``children`` runs a
    visitor per node.)"""
    return any(type(operation.operator) is cst.Modulo for operation in tree.descendants(test, cst.BinaryOperation))


def is_step_call(call: cst.Call) -> bool:
    """A backward pass or an optimizer's (or gradient scaler's) step."""
    func = call.func
    return isinstance(func, cst.Attribute) and makes_training_step(func.attr.value, dotted_name(func.value))


def steps_an_environment(call: cst.Call) -> bool:
    """``env.step(action)``: a reinforcement-learning loop runs one environment step per iteration."""
    func = call.func
    return isinstance(func, cst.Attribute) and steps_environment(func.attr.value, terminal_name(func.value))


def parameter_names(function: cst.FunctionDef) -> set[str]:
    """The names of ``function``'s named parameters (positional and keyword-only)."""
    return {p.name.value for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)}


def named_parameter(function: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    """``function``'s named parameter (positional or keyword-only) called ``name``, if any."""
    params = function.params
    return next((p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == name), None)


def first_param(function: cst.FunctionDef) -> Optional[str]:
    """The first positional parameter (``self`` of a method)."""
    params = (*function.params.posonly_params, *function.params.params)
    return params[0].name.value if params else None


def _strided_stop(iterable: cst.BaseExpression, stride_names: re.Pattern) -> Optional[cst.BaseExpression]:
    """The stop of ``range(0, stop, batch_size)`` (also in ``tqdm(...)``, ``enumerate(...)``) whose
    stride is named like ``stride_names``: the start of one batch or chunk per iteration."""
    while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("tqdm", "tqdm.tqdm", "enumerate") \
            and iterable.args:
        iterable = iterable.args[0].value
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"
            and len(iterable.args) == 3):
        return None
    stop, stride = iterable.args[1].value, iterable.args[2].value
    return stop if stride_names.search(terminal_name(stride) or "") is not None else None


def _is_len_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and dotted_name(expr.func) == "len"


def _first_dimension(expr: cst.BaseExpression) -> bool:
    """``x.shape[0]`` or ``x.size(0)``."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        index = expr.slice[0].slice if len(expr.slice) == 1 else None
        return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0"
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" \
        and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Integer) and expr.args[0].value.value == "0"


# A count of examples a loop collects up to (``num_samples``, ``batch_size``), not a length.
_EXAMPLE_COUNT = re.compile(r"(^|_)(samples|examples|images|batch_size)(_|$)")


def _runs_a_model(call: cst.Call) -> bool:
    """A call named for a model (``model(x)``, ``self.encoder(x)``), or one handed a model
    (``forward_chunk(model, chunk, state)``, ``evaluate(self.net, batch)``), or a module's
    ``forward`` called by name (``loss_fn.forward(g, p)``)."""
    if isinstance(call.func, cst.Attribute) and (call.func.attr.value == "forward" or (
            call.func.attr.value in MODEL_RUNNING_METHODS and is_model_name(terminal_name(call.func.value)))):
        return True  # (``model.predict(u, items)``: a model's inference method)
    return is_model_name(terminal_name(call.func)) or not is_class_name(terminal_name(call.func) or "") and any(
        arg.keyword is None and is_model_name(terminal_name(arg.value)) for arg in call.args)  # (not ``DDP(model)``)


def keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """What ``call`` passes as ``name=``, or None."""
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def terminal_name(node: cst.BaseExpression) -> Optional[str]:
    """The last identifier of a Name/Attribute chain (``self.model.encoder`` -> ``encoder``)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def iterable_identifiers(expr: cst.BaseExpression) -> list[str]:
    """The identifiers an iterable expression mentions (``tqdm(enumerate(val_loader))`` ->
    ``tqdm``, ``enumerate``, ``val_loader``), string literals excluded."""
    code = cst.Module([]).code_for_node(expr)
    return [
        name for name in _IDENTIFIER.findall(re.sub(r"(['\"]).*?\1", "", code))
        if name not in ITERATION_BUILTINS
    ]


def literal_key(expr: Optional[cst.BaseExpression]) -> Union[str, int, None]:
    """The value of a literal key: ``"loss"``, ``0``, ``-1``; None for anything else."""
    if isinstance(expr, cst.SimpleString):
        evaluated = expr.evaluated_value
        return evaluated if isinstance(evaluated, str) else None
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0) if expr.value.isdigit() else None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.value)
    return None


def subscript_key(subscript: cst.Subscript) -> Union[str, int, None]:
    """The literal key of ``x["loss"]`` or ``x[0]``; None for a slice, several indices or a name."""
    elements = subscript.slice
    if len(elements) != 1 or not isinstance(elements[0].slice, cst.Index):
        return None
    return literal_key(elements[0].slice.value)


def returned_part(returned: Optional[cst.BaseExpression], index: Optional[int],
                  key: Union[str, int, None] = None) -> Optional[cst.BaseExpression]:
    """What ``return returned`` gives at a tuple position or a dict key (the whole value for
    neither); None where the return statement does not spell it out."""
    if returned is None or index is None and key is None:
        return returned
    if index is not None and isinstance(returned, (cst.Tuple, cst.List)):
        return returned.elements[index].value if index < len(returned.elements) else None
    if key is not None and isinstance(returned, cst.Dict):
        return next((e.value for e in returned.elements if isinstance(e, cst.DictElement) and
                     literal_key(e.key) == key), None)
    return None


# Methods that return one item of the container they are called on.
ITEM_GETTERS = frozenset({"setdefault", "get"})


def _iterates_ids(loop: cst.For) -> bool:
    """``for i in ids.tolist()``, ``for i in labels.unique()``: the values of a tensor."""
    iterable = loop.iter
    return isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
        iterable.func.attr.value in ("tolist", "unique")


def to_eval_mode(switch: cst.Call) -> bool:
    """A mode switch (``x.eval()``, ``x.train(...)``) that puts ``x`` in eval mode: ``.eval()`` or
    ``.train(False)`` (not ``.train(True)``, nor ``.train(mode)``, whose mode is not known)."""
    if switch.func.attr.value == "eval":
        return True
    return bool(switch.args) and is_false(switch.args[0].value)


def _sets_training_mode(switch: cst.Call) -> bool:
    """``x.train()`` or ``x.train(True)``."""
    return switch.func.attr.value == "train" and (
        not switch.args or len(switch.args) == 1 and isinstance(switch.args[0].value, cst.Name)
        and switch.args[0].value.value == "True")


def is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def module_itself(expr: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """``expr`` without the calls that return the module they are called on
    (``encoder.to(device).eval()`` -> ``encoder``)."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
            expr.func.attr.value in MODULE_RETURNING_METHODS:
        expr = expr.func.value
    return expr


def root_name(expr: cst.BaseExpression, through_any_method: bool = False) -> Optional[str]:
    """The name a value hangs from through attributes and items: ``self`` for
    ``self.history[k]`` and for ``self.history.setdefault(k, [])`` (the dict's own item, not a
    new container); with ``through_any_method``, through every method call (``chunk`` of
    ``chunk.unsqueeze(0).to(device)``). An index is not followed (``img[..., top:]`` hangs from
    ``img``, not from ``top``)."""
    while True:
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and (
                through_any_method or expr.func.attr.value in ITEM_GETTERS):
            expr = expr.func.value
        else:
            return expr.value if isinstance(expr, cst.Name) else None


def carried_name(expr: cst.BaseExpression) -> Optional[str]:
    """``h`` for a name, ``self.h`` for an attribute of ``self`` (``self.stats.ema`` for one of an
    object ``self`` holds); None otherwise."""
    expr_type = type(expr)  # (not ``isinstance``: see ``_graph_reads``)
    if expr_type is cst.Name:
        return expr.value
    if expr_type is cst.Attribute:
        spelled = dotted_name(expr)
        if spelled is not None and spelled.startswith("self."):
            return spelled
    return None


def _alternatives(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The conditions of ``a or b or c`` (just ``test`` when it is no ``or``)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*_alternatives(test.left), *_alternatives(test.right)]
    return [test]


def _tests_first_value(test: cst.BaseExpression, name: str) -> bool:
    """``not h``, ``not isinstance(h, torch.Tensor)``, ``h is None``, or ``h.size(1) != x.size(0)``
    (a new batch size): a condition under which ``name`` gets a first value."""
    if _tested_for_none(test) == name:
        return True
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # ``h is not None and h[0].shape[1] > x.size(0)``: still a test for a new batch size
        return _tests_first_value(test.left, name) or _tests_first_value(test.right, name)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        tested = test.expression
        return isinstance(tested, cst.Call) and dotted_name(tested.func) == "isinstance" and bool(tested.args) and \
            carried_name(tested.args[0].value) == name
    return isinstance(test, cst.Comparison) and type(test.comparisons[0].operator).__name__ in _SIZE_CHANGES and \
        any(_size_of(side) == name for side in (test.left, test.comparisons[0].comparator))


# Comparisons of a state's size with the batch's that tell a new batch size (``!=``; ``<`` / ``>``
# where a smaller batch slices the state and a larger one restarts it). By name: LibCST's node
# classes load on first use, and the pre-screen must not load them.
_SIZE_CHANGES = frozenset({"NotEqual", "LessThan", "GreaterThan", "LessThanEqual", "GreaterThanEqual"})


def _tested_for_none(test: cst.BaseExpression) -> Optional[str]:
    """The name ``not x`` or ``x is None`` tests."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return carried_name(test.expression)
    if isinstance(test, cst.Comparison) and isinstance(test.comparisons[0].operator, cst.Is) and \
            isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None":
        return carried_name(test.left)
    return None


def _tested_not_none(test: cst.BaseExpression) -> Optional[str]:
    """The name ``x is not None`` tests (the other side of ``_tested_for_none``)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.IsNot) and \
            isinstance(test.comparisons[0].comparator, cst.Name) and test.comparisons[0].comparator.value == "None":
        return carried_name(test.left)
    return None


def _size_of(expr: cst.BaseExpression) -> Optional[str]:
    """The carried name whose size ``expr`` reads: ``h.size(1)``, ``h.shape[0]``, ``h.shape``."""
    sized = measured_tensor(expr)
    while isinstance(sized, cst.Subscript):  # ``self.h[0].shape[1]``: one part of a tuple of states
        sized = sized.value
    return carried_name(sized) if sized is not None else None


def measured_tensor(expr: cst.BaseExpression, methods: tuple[str, ...] = ("size",)) -> Optional[cst.BaseExpression]:
    """The tensor whose size ``expr`` reads: ``x.size(1)``, ``x.shape[0]``, ``x.shape`` (and the
    other ``methods`` given, e.g. ``x.numel()``)."""
    if isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in methods:
        return expr.func.value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "shape":
        return expr.value
    return None


def accumulator_name(expr: cst.BaseExpression) -> Optional[str]:
    """``carried_name``, and for a slot of one keyed by a name or a literal the slot spelled out
    (``self.data["preds"]``, ``self.store[key]``): what ``acc = torch.cat([acc, x])`` grows."""
    name = carried_name(expr)
    if name is not None or not isinstance(expr, cst.Subscript) or len(expr.slice) != 1:
        return name
    base, index = carried_name(expr.value), expr.slice[0].slice
    if base is None or not isinstance(index, cst.Index) or not isinstance(index.value, (cst.Name, cst.SimpleString)):
        return None
    return f"{base}[{index.value.value}]"
