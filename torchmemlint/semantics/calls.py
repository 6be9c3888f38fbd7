"""What a call does: which function of this file it runs (through plain names, ``self``/``super()``
methods, objects built from the file's classes, ``functools.partial``, bound-method aliases and
lambdas), which arguments land in which parameters, whether it runs a forward pass (a model or a
loss function) or a backward pass, and where each function of the file is called from (an index
built once per file, so that every question about callers is a lookup)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Optional, Union

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.modules import Modules
from torchmemlint.semantics.scopes import (Scope, Scopes, first_param, module_itself, named_parameter, terminal_name,
                                           to_eval_mode)
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import (
    DETACHED_TENSOR_ATTRIBUTES, EXACT_MODEL_NAMES, FORWARD_HOOK_REGISTRATIONS, GRADIENT_EXPLAINER, GRAPH_BREAKING_METHODS,
    METRIC_OBJECT_NAME, PARAMETER_FREE_MODULES, SEARCH_DRIVERS, is_class_name, is_model_name, keeps_every_input,
)

# Method names too common across libraries to guess the file's class from (``optimizer.step()``).
_COMMON_METHOD_NAMES = frozenset({
    "step", "update", "forward", "backward", "zero_grad", "train", "eval", "add", "append", "extend", "get",
    "put", "push", "pop", "reset", "run", "log", "save", "load", "close", "to", "cuda", "cpu", "item", "sample",
    "predict", "fit", "evaluate", "__call__", "state_dict", "load_state_dict", "parameters", "clear",
})
# Methods of a model that run (part of) its forward pass; a TTS or detection model's own ``infer`` /
# ``inference`` entry point runs it with grad on unless its caller disables it (``generate`` and
# ``predict`` are left out: transformers' ``generate`` and many ``predict`` wrappers disable grad
# themselves).
FORWARD_METHODS = frozenset({"encode", "decode", "compute_loss", "get_loss", "forward_train", "predict_step",
                             "infer", "inference"})
# A model's methods that run (part of) its forward: CLIP's ``encode_image``, Hugging Face's
# ``get_text_features``, fairseq's ``extract_features``, ``embed_tokens``-style encoders, a neural
# field's ``render`` / ``render_single_image``, and methods named for a forward (timm's
# ``forward_features``, WaveNet's ``incremental_forward``), a policy's log-probabilities of actions
# (``actor.get_log_prob(pi, a)``, Stable-Baselines' ``policy.evaluate_actions(obs, a)``), a ViT's
# ``get_intermediate_layers`` (DINO, timm), not the hooks' ``register_forward_hook``.
_FORWARD_METHOD = re.compile(r"^(?:encode|decode|embed|render)_\w+$|^get_\w*features$|^extract_features$|^render$"
                             r"|^get_intermediate_layers$"
                             r"|^(?:get_)?log_probs?$|^evaluate_actions$"
                             r"|^(?!register_)(?:\w+_)?forward(?:_(?!\w*hook)\w+)?$")
LOSS_SUFFIX = re.compile(r"(?:loss|Loss|criterion)$")
# How a parameter holding "the" loss function is named (underscores dropped, lower case): the one
# loss class of the file (``...Loss``, ``...Criterion``) is what it holds.
_LOSS_PARAMETER_NAMES = frozenset({"criterion", "criterium", "loss", "lossfn", "lossfunc", "lossfunction", "lossfct",
                                   "lossmodule", "lossobj"})
_FUNCTIONAL_LOSSES = ("cross_entropy", "nll_loss", "kl_div", "binary_cross_entropy_with_logits")

Function = Union["cst.FunctionDef", "cst.Lambda"]  # strings: importing this module does not load LibCST


def _entry_of_models(loop: cst.For, name: str) -> bool:
    """``name`` is what ``for k, name in losses.items()`` or ``for name in self.models.values()``
    binds: a value of a mapping named for models or loss functions (``criterion``, ``losses``,
    ``loss_fns``; a plural read as its singular)."""
    spelled = _mapping_iterated_for(loop, name) or ""
    return any(is_model_name(singular) for singular in (spelled, spelled[:-1] if spelled.endswith("s") else None,
                                                        spelled[:-2] if spelled.endswith("es") else None) if singular)


def _mapping_iterated_for(loop: cst.For, name: str) -> Optional[str]:
    """The last name of the mapping whose values ``loop`` binds to ``name`` (``for k, name in
    m.items()``, ``for name in m.values()``), or None."""
    iterable, target = loop.iter, loop.target
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args):
        return None
    if iterable.func.attr.value == "items":
        bound = target.elements[1].value if isinstance(target, cst.Tuple) and len(target.elements) == 2 else None
    elif iterable.func.attr.value == "values":
        bound = target
    else:
        return None
    return terminal_name(iterable.func.value) if isinstance(bound, cst.Name) and bound.value == name else None


def _rpc_proxy(receiver: cst.BaseExpression) -> bool:
    """``rref.remote()``, ``rref.rpc_sync()``, ``rref.rpc_async()``: a proxy to an object on
    another process (torch.distributed.rpc)."""
    return isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and \
        receiver.func.attr.value in ("remote", "rpc_sync", "rpc_async") and not receiver.args


@dataclass(frozen=True)
class Callee:
    """The function a call runs. Its first ``skipped`` parameters are filled by the receiver
    (``self`` of a method), the next ones by the arguments ``functools.partial`` bound (``prefix``,
    evaluated where the partial was made, ``prefix_at``). ``constructs``: the call builds an object
    of this class of the file (``function`` is its ``__init__``, or None without one)."""

    function: Optional[Function]
    skipped: int = 0
    prefix: tuple[cst.BaseExpression, ...] = ()
    prefix_at: Optional[cst.CSTNode] = None
    constructs: Optional[cst.ClassDef] = None
    # Resolved by the method's name alone (``model.init_hidden()`` where nothing says what
    # ``model`` is, and one class of the file defines ``init_hidden``): good enough to read what it
    # returns, not to count the call among the method's call sites.
    guessed: bool = False

    @property
    def name(self) -> str:
        if self.constructs is not None:
            return self.constructs.name.value
        return self.function.name.value if isinstance(self.function, cst.FunctionDef) else "<lambda>"


# A verb first: a function computing or logging metrics, not a metric object.
_ACTION_PREFIX = re.compile(r"(?:compute|calc|calculate|get|log|eval|evaluate|update|print|report|save|show)_", re.IGNORECASE)


class Calls:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, modules: Modules) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.modules = modules
        self._callee: dict[cst.Call, Optional[Callee]] = {}
        self._backwarded: dict[object, set[str]] = {}
        self._feeding_backward: dict[object, set[str]] = {}
        self._own_attributes: dict[cst.ClassDef, frozenset[str]] = {}
        self._backward_roots: dict[cst.Call, list[cst.BaseExpression]] = {}
        self._forward_passes: dict[cst.Call, bool] = {}
        self._eval_factory_bindings: dict[Scope, list[tuple[cst.Assign, cst.Call]]] = {}
        self._differentiates_others: dict[cst.FunctionDef, bool] = {}

    # -- which function a call runs ------------------------------------------------------
    def callee(self, call: cst.Call) -> Optional[Callee]:
        if call in self._callee:
            return self._callee[call]
        self._callee[call] = None  # recursion guard (``f = partial(f, ...)``)
        found = self._resolve(call.func, call, 0)
        self._callee[call] = found
        return found

    def _resolve(self, func: cst.BaseExpression, at: cst.CSTNode, depth: int) -> Optional[Callee]:
        if depth > 4:
            return None
        if isinstance(func, cst.Name):
            if func.value not in self._local_callable_names:
                return self._parameter_named_for_class(func.value, at)
            return self._resolve_name(func.value, at, depth)
        if isinstance(func, cst.Attribute):
            return self._resolve_method(func, at) or self._instance_call(func, at) or self._made_by_a_factory(func, at)
        if isinstance(func, cst.Call) and dotted_name(func.func) == "super":
            return None
        return None

    @cached_property
    def _local_callable_names(self) -> frozenset[str]:
        """Names a bare call could resolve to: the file's functions and classes, and names bound
        to ``partial(...)``, a lambda or an attribute (a bound-method alias)."""
        names = set(self.scopes.functions_by_name) | set(self.scopes.classes_by_name)
        for assign in self.tree.nodes(cst.Assign):
            if isinstance(assign.value, (cst.Call, cst.Lambda, cst.Attribute, cst.Name)):
                names.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
            if isinstance(assign.value, cst.Call):  # ``logits, loss_fn = self._forward_step(batch)``
                names.update(e.value.value for t in assign.targets if isinstance(t.target, cst.Tuple)
                             for e in t.target.elements if isinstance(e.value, cst.Name))
                if terminal_name(assign.value.func) in self.scopes.functions_by_name:
                    # ``self.train_step = self._make_train_step()``: the closure a factory returns
                    names.update(t.target.attr.value for t in assign.targets if isinstance(t.target, cst.Attribute))
        return frozenset(names)

    def _resolve_name(self, name: str, at: cst.CSTNode, depth: int) -> Optional[Callee]:
        for binding in self.scopes.bindings_of(name, at):
            value, made_at = binding.value, binding.node
            if binding.index is not None:  # ``logits, loss_fn = self._forward_step(batch)``
                value, made_at = self._returned_callable(value, binding.index)
            if isinstance(value, cst.Lambda):
                return Callee(value)
            if isinstance(value, cst.Call) and self.imports.qualify(value.func) == "functools.partial" and value.args:
                inner = self._resolve(value.args[0].value, made_at, depth + 1)
                if inner is None or inner.constructs is not None:
                    return None
                bound = tuple(a.value for a in value.args[1:] if a.keyword is None and not a.star)
                return Callee(inner.function, inner.skipped, bound, made_at)
            if binding.index is not None:
                return None
            if isinstance(value, (cst.Name, cst.Attribute)):  # ``step = trainer.train_step``
                return self._resolve(value, binding.node, depth + 1)
            if isinstance(value, cst.Call):  # ``pool = ImagePool(50)``; ``pool(images)``
                # ``averager = EMA()``; ``averager(losses)``: what the factory returns, else ``__call__``
                return self._returned_function(value) or self._instance_call(cst.Name(name), at)
            return None  # bound to something else: not the function of that name
        cls = self.scopes.classes_by_name.get(name)
        if cls is not None:
            return Callee(self.method_of(cls, "__init__"), skipped=1, constructs=cls)
        return self._visible_function(name, at)

    def _returned_callable(self, call: Optional[cst.BaseExpression], index: int) \
            -> tuple[Optional[cst.BaseExpression], Optional[cst.CSTNode]]:
        """The ``partial(...)`` or lambda that a function of the file returns at position
        ``index`` of its tuple (``return logits, partial(self._loss_func, batch)``), with the
        ``return`` it is made at, where every return gives one; else (None, None)."""
        callee = self.callee(call) if isinstance(call, cst.Call) else None
        if callee is None or not isinstance(callee.function, cst.FunctionDef):
            return None, None
        made = [(ret.value.elements[index].value, ret) for ret in self.scopes.scope_nodes(callee.function, cst.Return)
                if isinstance(ret.value, cst.Tuple) and len(ret.value.elements) > index]
        if len(made) != 1 or not isinstance(made[0][0], (cst.Call, cst.Lambda)):
            return None, None
        return made[0]

    def _returned_function(self, call: cst.Call) -> Optional[Callee]:
        """The function every ``return`` of the callee of ``call`` hands back: one defined inside
        it (a factory: ``def EMA(beta): ...; def _update(metrics): ...; return _update``), or a
        method of its own class (``criterion = self.get_loss_criterion()`` whose body is
        ``return self.process_loss``)."""
        callee = self.callee(call)
        if callee is None or not isinstance(callee.function, cst.FunctionDef) or callee.constructs is not None:
            return None
        returned = {dotted_name(ret.value) if ret.value is not None else None
                    for ret in self.scopes.scope_nodes(callee.function, cst.Return)}
        if len(returned) != 1 or None in returned:
            return None
        owner, _, name = returned.pop().rpartition(".")
        if not owner:
            inner = next((f for f in self.scopes.functions_by_name.get(name, ())
                          if self.scopes.function_of(f) is callee.function), None)
            return Callee(inner) if inner is not None else None
        cls = self.scopes.self_class(callee.function)
        method = self.method_of(cls, name) if cls is not None and owner == first_param(callee.function) else None
        return Callee(method, skipped=0 if _is_static(method) else 1) if method is not None else None

    def _made_by_a_factory(self, func: cst.Attribute, at: cst.CSTNode) -> Optional[Callee]:
        """``self.train_step(x, y)`` where the class sets ``self.train_step =
        self._make_train_step()`` (every assignment of the attribute in the class), a factory
        whose every ``return`` hands back the one function it defines: that closure."""
        if dotted_name(func.value) != "self":
            return None
        cls = self.scopes.self_class(self.scopes.function_of(at))
        found: Optional[Callee] = None
        for assign in self.scopes.assignments_to(f"self.{func.attr.value}"):
            if self.scopes.self_class(self.scopes.function_of(assign)) is not cls:
                continue
            made = self._returned_function(assign.value) if isinstance(assign.value, cst.Call) else None
            if made is None or found is not None and made.function is not found.function:
                return None
            found = made
        return found

    def _instance_call(self, func: cst.BaseExpression, at: cst.CSTNode) -> Optional[Callee]:
        """Calling an object of a class of the file runs its ``__call__`` (``self.rms(x)`` with
        ``self.rms = RunningStats()``), or a torchmetrics ``Metric``'s ``update``; a module's
        ``forward`` is read as a forward pass instead."""
        built_from = self.scopes.classes_built_into(func, at)
        if not built_from:
            return self._stored_parameter_named_for_class(func, at) or self._stored_parameter_default(func, at)
        for class_name in built_from:
            cls = self.scopes.classes_by_name.get(class_name)
            if cls is not None and any(base.startswith("torchmetrics.") and base.endswith("Metric")
                                       for base in self.scopes.class_bases(cls)):
                method = self.method_of(cls, "update")  # (``Metric.forward`` runs ``update``)
                if method is not None:
                    return Callee(method, skipped=1)
            if cls is not None and not self.scopes.is_torch_module_class(cls):
                method = self.method_of(cls, "__call__")
                if method is not None:
                    return Callee(method, skipped=1)
        return None

    def list_state_metric(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The metric object that ``call`` updates when the file imports a torchmetrics class with
        list states (``keeps_every_input``) and the object called (or ``update``d) is made from
        one, from a ``MetricCollection``, or named for a metric (``met(preds, labels)``,
        ``self.train_metrics.update(p, y)``, built by a helper or passed in); else None."""
        if not self._imports_list_state_metric:
            return None
        func = call.func
        target = func.value if isinstance(func, cst.Attribute) and func.attr.value in ("update", "forward") else func
        if not isinstance(target, (cst.Name, cst.Attribute)):
            return None
        name = terminal_name(target) or ""
        if METRIC_OBJECT_NAME.search(name) and not _ACTION_PREFIX.match(name) and not (
                isinstance(target, cst.Name) and (name in self.imports.aliases or name in self.scopes.functions_by_name)):
            return target  # (not ``compute_metrics(p, y)``, a function: it computes, it keeps nothing)
        if isinstance(target, cst.Name) and any(
                isinstance(b.value, cst.Call) and (keeps_every_input(q := self.imports.qualify(b.value.func) or "")
                                                   or q == "torchmetrics.MetricCollection")
                for b in self.scopes.reaching_bindings(target.value, call)):
            return target
        return None

    @cached_property
    def _imports_list_state_metric(self) -> bool:
        return any(keeps_every_input(qualified) for qualified in self.imports.aliases.values())

    def module_forward(self, call: cst.Call, classes: frozenset) -> Optional[Callee]:
        """``mape(logits, y)`` where ``mape = MAPE().cuda()`` and ``MAPE`` is one of ``classes``,
        module classes of the file: its ``forward``. The call's value is read as a forward pass
        (``callee`` is None); what that ``forward`` keeps on the module is kept all the same."""
        for class_name in self.scopes.classes_built_into(call.func, call):
            cls = self.scopes.classes_by_name.get(class_name)
            if cls in classes:
                method = self.method_of(cls, "forward")
                if method is not None:
                    return Callee(method, skipped=1)
        return None

    def _parameter_named_for_class(self, name: str, at: cst.CSTNode) -> Optional[Callee]:
        """A parameter called like the one callable class of the file whose name ends with it
        (``cam`` for ``YOLOCAM``, ``pool`` for ``FakeImagePool``): calling it runs that class's
        ``__call__``, a guess, as for a method found by its name alone."""
        cls = self.class_named_for(cst.Name(name), at, callable_only=True)
        method = self.method_of(cls, "__call__") if cls is not None else None
        return Callee(method, skipped=1, guessed=True) if method is not None else None

    def _init_of(self, at: cst.CSTNode) -> Optional[cst.FunctionDef]:
        """The ``__init__`` of the class whose method ``at`` is in."""
        cls = self.scopes.self_class(self.scopes.function_of(at))
        return self.method_of(cls, "__init__") if cls is not None else None

    def _stored_parameter_name(self, func: cst.BaseExpression, at: cst.CSTNode) -> Optional[str]:
        """For ``self.<attribute>`` in a method of a class, the ``__init__`` parameter it was set
        from; None for anything else."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return None
        init = self._init_of(at)
        return self.scopes.stored_parameters(init).get(func.attr.value) if init is not None else None

    def _stored_parameter_named_for_class(self, func: cst.BaseExpression, at: cst.CSTNode) -> Optional[Callee]:
        """``self.actor(data)`` where ``__init__`` stored its ``actor`` parameter and the file has
        one callable class whose name ends with it (``DiffusionTrackActor``): that class's
        ``__call__``, a guess, as for a parameter of that name."""
        parameter = self._stored_parameter_name(func, at)
        named = self._class_named(parameter, callable_only=True) if parameter is not None else None
        method = self.method_of(named, "__call__") if named is not None else None
        return Callee(method, skipped=1, guessed=True) if method is not None else None

    def stored_parameter_class(self, func: cst.BaseExpression, at: cst.CSTNode) -> Optional[cst.ClassDef]:
        """For ``self.memory``, set in ``__init__`` from its ``memory`` parameter, the one class of
        the file whose name ends with it (``HybridMemory``): a guess at what callers hand in."""
        parameter = self._stored_parameter_name(func, at)
        return self._class_named(parameter, callable_only=False) if parameter is not None else None

    def _stored_parameter_default(self, func: cst.BaseExpression, at: cst.CSTNode) -> Optional[Callee]:
        """``self.losser(out, y)`` where ``__init__(self, ..., losser=mask_nll_loss)`` stored it:
        the file's function the default names (a guess: a caller may pass another)."""
        parameter = self._stored_parameter_name(func, at)
        if parameter is None:
            return None
        init = self._init_of(at)
        default = param.default if (param := named_parameter(init, parameter)) is not None else None
        if not isinstance(default, cst.Name):
            return None
        found = self._visible_function(default.value, init)
        return Callee(found.function, guessed=True) if found is not None else None

    def class_named_for(self, receiver: cst.BaseExpression, at: cst.CSTNode,
                         callable_only: bool = False) -> Optional[cst.ClassDef]:
        """The one class of the file (with ``__call__``, for ``callable_only``) whose name ends
        with the name of the parameter ``receiver`` (``learner`` for ``STDPLearner``)."""
        if not isinstance(receiver, cst.Name):
            return None
        named = self._class_named(receiver.value, callable_only)
        if named is None:
            return None
        return named if self.scopes.is_parameter(receiver.value, at) else None

    def _class_named(self, name: str, callable_only: bool) -> Optional[cst.ClassDef]:
        spelled = name.replace("_", "").lower()
        if len(spelled) < 3:
            return None
        # (a module class too, for a method: ``actor.evaluate(s)`` with ``Actor(Model)`` the class)
        classes = [cls for cls, _ in self._callable_classes] if callable_only else \
            list(self.scopes.classes_by_name.values())
        named = [cls for cls in classes if cls.name.value.lower().endswith(spelled)]
        if not named and spelled in _LOSS_PARAMETER_NAMES:  # ``criterion`` for ``MaskedAtomLoss``
            named = [cls for cls in classes if cls.name.value.lower().endswith(("loss", "criterion"))]
        return named[0] if len(named) == 1 else None

    @cached_property
    def _plain_classes(self) -> list[cst.ClassDef]:
        """The classes of the file that are not modules."""
        return [cls for cls in self.scopes.classes_by_name.values() if not self.scopes.is_torch_module_class(cls)]

    @cached_property
    def _callable_classes(self) -> list[tuple[cst.ClassDef, cst.FunctionDef]]:
        """Classes of the file, not modules, that define ``__call__``, each with that method."""
        found = []
        for cls in self._plain_classes:
            method = self.method_of(cls, "__call__")
            if method is not None:
                found.append((cls, method))
        return found

    def _visible_function(self, name: str, at: cst.CSTNode) -> Optional[Callee]:
        """A plain function (not a method) of that name, defined at module level or in a
        function around ``at``; None when several could be meant."""
        candidates = [f for f in self.scopes.functions_by_name.get(name, ()) if self.scopes.class_of(f) is None]
        visible = [f for f in candidates
                   if (outer := self.scopes.function_of(f)) is None or self.tree.contains(outer, at)]
        return Callee(visible[0]) if len(visible) == 1 else None

    def _resolve_method(self, func: cst.Attribute, at: cst.CSTNode) -> Optional[Callee]:
        name = func.attr.value
        receiver = func.value
        if name not in self.scopes.functions_by_name:
            return None
        if isinstance(receiver, cst.Name) and receiver.value == "self" or \
                isinstance(receiver, cst.Call) and dotted_name(receiver.func) == "super":
            method = self.scopes.function_of(at)
            cls = self.scopes.self_class(method)
            if cls is None:
                return None
            skip_own = isinstance(receiver, cst.Call)
            found = self.method_of(cls, name, skip_own=skip_own)
            if not skip_own and (found is None or _is_stub(found)):  # (left to the subclasses, or abstract)
                found = self._only_override(cls, name) or found
            # (``self.cos_distance(a, b)`` of a static method binds ``a`` to its first parameter)
            return Callee(found, skipped=0 if _is_static(found) else 1) if found is not None else None
        local_class = self.scopes.classes_by_name.get(dotted_name(receiver) or "")
        if local_class is not None:  # ``Trainer.step(trainer, batch)``: an unbound method
            found = self.method_of(local_class, name)
            return Callee(found) if found is not None else None
        built_from = self.scopes.classes_built_into(receiver, at)
        if built_from and not any(n in self.scopes.classes_by_name for n in built_from):
            built_from = self._classes_from_factory(receiver, at) or built_from
        for class_name in built_from:
            cls = self.scopes.classes_by_name.get(class_name)
            if cls is not None:
                found = self.method_of(cls, name)
                if found is not None:
                    return Callee(found, skipped=0 if _is_static(found) else 1)
        if built_from or self.imports.qualify(receiver) is not None:
            return None
        named_for = self.class_named_for(receiver, at)
        if named_for is None and isinstance(receiver, cst.Attribute) and dotted_name(receiver.value) == "self":
            stored = self._stored_parameter_name(receiver, at)  # ``self.scorer.score(x)``, ``self.scorer = scorer``
            named_for = self._class_named(stored, callable_only=False) if stored is not None else None
        if named_for is not None:  # ``learner.step()`` with ``learner`` a parameter and ``STDPLearner`` the class
            found = self.method_of(named_for, name)
            if found is not None:
                return Callee(found, skipped=0 if _is_static(found) else 1)
        methods = self._implementations(name)
        if len(methods) == 1 and methods[0] is not self.scopes.function_of(at):
            # (not the method itself: ``def append(self, val): self._buffer.append(val)`` hands
            # the value on to the container it wraps)
            return Callee(methods[0], skipped=0 if _is_static(methods[0]) else 1, guessed=True)
        return None

    def _classes_from_factory(self, receiver: cst.BaseExpression, at: cst.CSTNode) -> list[str]:
        """``meter = xp.add_metric("loss")`` where a function of the file builds and returns the
        object (``metric = AvgMetric(name); ...; return metric``): the classes it returns."""
        if not isinstance(receiver, cst.Name):
            return []
        found: list[str] = []
        for binding in self.scopes.reaching_bindings(receiver.value, at):
            callee = self.callee(binding.value) if isinstance(binding.value, cst.Call) else None
            if callee is None or not isinstance(callee.function, cst.FunctionDef) or callee.constructs is not None:
                continue
            for ret in self.scopes.scope_nodes(callee.function, cst.Return):
                returned = module_itself(ret.value)
                names = [dotted_name(returned.func) or ""] if isinstance(returned, cst.Call) else \
                    self.scopes.classes_built_into(returned, ret) if returned is not None else []
                found += [n for n in names if n in self.scopes.classes_by_name]
        return found

    def _implementations(self, name: str) -> list[cst.FunctionDef]:
        """The methods ``name`` of the file's classes; where there are several, not the stubs (an
        abstract base's declaration beside the subclasses that implement it)."""
        methods = [f for f in self.scopes.functions_by_name.get(name, ()) if self.scopes.class_of(f) is not None]
        return [f for f in methods if not _is_stub(f)] if len(methods) > 1 else methods

    def candidates(self, call: cst.Call) -> list[Callee]:
        """The methods an unresolved ``x.name(...)`` may run where several classes of the file
        define ``name`` (a metric wrapper's ``process`` and the wrapped metric's, both called as
        ``metric.process(state)``): each a guess; empty where the call resolves or ``x`` is known
        to be something else."""
        func = call.func
        if isinstance(func, cst.Name) and self.callee(call) is None:
            # ``step = self.val_step if validation else self.train_step``: either
            return [callee for callee, _, _ in self._either(call)] + self._entries_of_a_function_table(call)
        if self.callee(call) is not None or not isinstance(func, cst.Attribute) or \
                func.attr.value not in self.scopes.functions_by_name:
            return []
        receiver = func.value
        if dotted_name(receiver) in ("self", None) and not isinstance(receiver, cst.Attribute) or \
                self.scopes.classes_built_into(receiver, call) or self.imports.qualify(receiver) is not None:
            return []
        methods = self._implementations(func.attr.value)
        return [Callee(m, skipped=0 if _is_static(m) else 1, guessed=True) for m in methods] if len(methods) > 1 else []

    def _entries_of_a_function_table(self, call: cst.Call) -> list[Callee]:
        """What ``fn(pred, y)`` may run where ``for name, fn in self.metrics.items()`` iterates a
        dict of the file's functions (``self.metrics = {"mae": mean_abs_error}``): each of them."""
        func = call.func
        found: list[Callee] = []
        for binding in self.scopes.reaching_bindings(func.value, call):
            loop = binding.node
            if not isinstance(loop, cst.For) or _mapping_iterated_for(loop, func.value) is None:
                continue
            mapping = loop.iter.func.value
            spelled = dotted_name(mapping)
            if isinstance(mapping, cst.Name):
                tables = [b.value for b in self.scopes.bindings_of(mapping.value, loop) if b.value is not None]
            elif spelled is not None and spelled.startswith("self."):
                tables = self.scopes.values_assigned_to(spelled)
            else:
                continue
            for table in tables:
                for entry in table.elements if isinstance(table, cst.Dict) else ():
                    if isinstance(entry, cst.DictElement) and isinstance(entry.value, (cst.Name, cst.Attribute)):
                        callee = self._resolve(entry.value, table, 1)
                        if callee is not None and isinstance(callee.function, cst.FunctionDef) and callee.constructs is None:
                            found.append(callee)
        return found

    def _either(self, call: cst.Call) -> list[tuple[Callee, cst.IfExp, bool]]:
        """What a call of a name bound to ``a if flag else b`` may run (a call that resolves runs
        what it resolves to): each branch's function, with the choice and whether the branch is
        the one taken when its test is true."""
        func = call.func
        if not isinstance(func, cst.Name) or func.value not in self._names_bound_to_a_choice or \
                self.callee(call) is not None:
            return []
        chosen = [b.value for b in self.scopes.reaching_bindings(func.value, call) if isinstance(b.value, cst.IfExp)]
        if len(chosen) != 1:
            return []
        either = [(self._resolve(branch, chosen[0], 1), chosen[0], taken)
                  for branch, taken in ((chosen[0].body, True), (chosen[0].orelse, False))]
        return [(c, choice, taken) for c, choice, taken in either
                if c is not None and c.function is not None and c.constructs is None]

    @cached_property
    def _names_bound_to_a_choice(self) -> frozenset[str]:
        return frozenset(t.target.value for assign in self.tree.nodes(cst.Assign) if isinstance(assign.value, cst.IfExp)
                         for t in assign.targets if isinstance(t.target, cst.Name))

    @cached_property
    def _chosen_sites(self) -> dict[Function, list[tuple[cst.Call, cst.IfExp, bool]]]:
        sites: dict[Function, list[tuple[cst.Call, cst.IfExp, bool]]] = {}
        if self._names_bound_to_a_choice:
            for call in self.tree.nodes(cst.Call):
                for callee, choice, taken in self._either(call):
                    sites.setdefault(callee.function, []).append((call, choice, taken))
        return sites

    def chosen_sites(self, function: Function) -> list[tuple[cst.Call, cst.IfExp, bool]]:
        """The calls that run ``function`` as one branch of a choice (``step(x, y)`` after ``step =
        self.val_step if validation else self.train_step``): each with the choice and whether
        ``function`` is the branch its true test takes."""
        return self._chosen_sites.get(function, [])

    def method_of(self, cls: cst.ClassDef, name: str, skip_own: bool = False) -> Optional[cst.FunctionDef]:
        """The method ``name`` that ``cls`` (or a base class of this file) defines."""
        classes = [] if skip_own else [cls]
        classes += [c for base in self.scopes.class_bases(cls)
                    if (c := self.scopes.classes_by_name.get(base)) is not None and c is not cls]
        for owner in classes:
            for func in self.scopes.functions_by_name.get(name, ()):
                if self.scopes.class_of(func) is owner:
                    return func
        return None

    def _only_override(self, cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
        """A template method's hook that ``cls`` calls on ``self`` but leaves to its subclasses
        (``self.test_step(batch)`` in a base trainer): the one subclass of the file that defines it."""
        found = [func for func in self.scopes.functions_by_name.get(name, ())
                 if (owner := self.scopes.class_of(func)) is not None and owner is not cls
                 and cls.name.value in self.scopes.class_bases(owner)]
        return found[0] if len(found) == 1 else None

    # -- which argument goes where ---------------------------------------------------------
    def arguments(self, call: cst.Call, callee: Callee) -> dict[str, list[tuple[cst.BaseExpression, cst.CSTNode]]]:
        """The argument expressions each parameter of ``callee`` receives (with the node to
        evaluate each at): positional ones in order after the skipped parameters, keywords by
        name, the rest in ``*args`` / ``**kwargs``."""
        function = callee.function
        if function is None:
            return {}
        params = function.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)][callee.skipped:]
        keyword = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        star_kwargs = params.star_kwarg.name.value if params.star_kwarg is not None else None
        result: dict[str, list[tuple[cst.BaseExpression, cst.CSTNode]]] = {}
        for name, expr in zip(positional, callee.prefix):
            result.setdefault(name, []).append((expr, callee.prefix_at or call))
        positional = positional[len(callee.prefix):]
        index = 0
        for arg in call.args:
            if arg.star == "**":  # ``f(**info)``: the mapping's values, for ``**kwargs``
                if star_kwargs is not None:
                    result.setdefault(star_kwargs, []).append((arg.value, call))
                continue
            if arg.star:  # ``f(*xs)``: spread over what is left
                for name in positional[index:] + ([star] if star else []):
                    result.setdefault(name, []).append((arg.value, call))
                continue
            if arg.keyword is not None:
                name = arg.keyword.value
                target = name if name in keyword else star_kwargs
            elif index < len(positional):
                target = positional[index]
                index += 1
            else:
                target = star
            if target is not None:
                result.setdefault(target, []).append((arg.value, call))
        return result

    def known_parameters(self, call: cst.Call, callee: Callee,
                         outer: Optional[dict[str, object]] = None) -> dict[str, object]:
        """The values ``call`` decides for the callee's names: parameters it passes a literal
        (``train=False``) or leaves to a literal default (``optimizer=None``), a name of the
        caller's ``outer`` known values handed on (``compute_step(optimizer, ...)``), and names
        bound once to a test of those (``training = optimizer is not None``). Only names the
        callee never rebinds."""
        function = callee.function
        if not isinstance(function, cst.FunctionDef) or callee.constructs is not None:
            return {}
        passed = self.arguments(call, callee)
        bindings = self.scopes.bindings(function)
        known: dict[str, object] = {}
        for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
            name = param.name.value
            given = passed.get(name)
            expr = given[0][0] if given and len(given) == 1 else None if given else param.default
            value = _literal(expr)
            if value is _UNKNOWN and outer and isinstance(expr, cst.Name) and expr.value in outer:
                value = outer[expr.value]
            if value is not _UNKNOWN and len(bindings.get(name, ())) == 1:
                known[name] = value
        if known:
            for name, bound in bindings.items():
                if name not in known and len(bound) == 1 and bound[0].value is not None and bound[0].index is None \
                        and not bound[0].augmented and (truth := _decided(bound[0].value, known)) is not None:
                    known[name] = truth
        return known

    def calls_that_run(self, function: cst.FunctionDef, known: dict[str, object]) -> list[cst.Call]:
        """The calls of ``function`` outside the blocks that cannot run given ``known`` values of
        its names: the body of ``if train:`` where ``train`` is False, of ``if optimizer is not
        None:`` where it is None, the ``else`` of a test that holds (an epoch helper shared by
        training and evaluation, run to evaluate, skips its backward)."""
        calls = self.scopes.scope_nodes(function, cst.Call)
        if not known:
            return list(calls)
        skipped: list[cst.BaseSuite] = []
        for branch in self.scopes.scope_nodes(function, cst.If):
            truth = _decided(branch.test, known)
            if truth is False:
                skipped.append(branch.body)
            elif truth is True and isinstance(branch.orelse, cst.Else):
                skipped.append(branch.orelse.body)
        return [c for c in calls if not any(self.tree.contains(block, c) for block in skipped)]

    def passed_to(self, param: "cst.Param") -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """What the callers of ``param``'s function hand to it (with the node to evaluate each
        at); for ``__init__``, what the constructions of its class hand over (``LoopState(w)``)."""
        function = self.scopes.function_of(param)
        if function is None:
            return []
        sites = list(self.call_sites(function))
        cls = self.scopes.class_of(function)
        if function.name.value == "__init__" and cls is not None:
            sites += self.calls_spelled(cls.name.value, method=False)
        return [(expr, where) for site in sites if (callee := self.callee(site)) is not None
                for expr, where in self.arguments(site, callee).get(param.name.value, [])]

    # -- where a function is called ----------------------------------------------------------
    @cached_property
    def _sites(self) -> dict[Function, list[cst.Call]]:
        """Every call of the file by the function it runs (resolved once per file)."""
        sites: dict[Function, list[cst.Call]] = {}
        names = self._local_callable_names
        for call in self.tree.nodes(cst.Call):
            func = call.func
            spelled = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) \
                else None
            if spelled is None or spelled not in names and not (
                    self._callable_classes and (isinstance(func, cst.Name) or dotted_name(func.value) == "self")):
                # (a parameter named for a callable class of the file: ``unit(batch)`` runs its
                # ``__call__``; so does ``self.loss_fn(...)`` set to an object of one)
                continue
            callee = self.callee(call)
            if callee is not None and callee.function is not None and callee.constructs is None and \
                    (not callee.guessed or isinstance(func, cst.Name) or self._collaborator_call(call)):
                sites.setdefault(callee.function, []).append(call)
        return sites

    def _collaborator_call(self, call: cst.Call) -> bool:
        """A method guessed by its name alone, called on a parameter of the calling function
        (``agent.choose_action(obs)`` in ``train(env, agent)``): the object handed in is most
        likely the file's class that defines it — unless the name is one every library uses and
        the method does not even train (``learner.train(batch)`` whose body runs a backward)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return False
        if func.attr.value in _COMMON_METHOD_NAMES:
            callee = self.callee(call)
            if callee is None or not isinstance(callee.function, cst.FunctionDef) or \
                    not (self.runs_backward(callee.function) or self._result_differentiated(call)
                         or self._receiver_reads_own_attribute(call, callee.function)):
                return False
        return self.scopes.handed_in(func.value.value, self.scopes.function_of(call))

    def _receiver_reads_own_attribute(self, call: cst.Call, method: cst.FunctionDef) -> bool:
        """The caller also reads an attribute of the receiver that the method's class sets on
        ``self`` (``if name in ema.shadow: ema.update(name, param)``): an object of that class."""
        cls = self.scopes.class_of(method)
        receiver = call.func.value.value
        if cls is None:
            return False
        own = self.attributes_set_on_self(cls)
        return any(type(read.value) is cst.Name and read.value.value == receiver and read.attr.value in own
                   for read in self.scopes.scope_nodes(self.scopes.function_of(call) or self.tree.module, cst.Attribute))

    def attributes_set_on_self(self, cls: cst.ClassDef) -> frozenset[str]:
        """The attributes the class's code assigns on ``self`` (once per class)."""
        known = self._own_attributes.get(cls)
        if known is None:
            known = self._own_attributes[cls] = frozenset(
                t.target.attr.value for assign in self.tree.descendants(cls, cst.Assign) for t in assign.targets
                if isinstance(t.target, cst.Attribute) and dotted_name(t.target.value) == "self")
        return known

    def results_differentiated(self, function: cst.FunctionDef) -> bool:
        """Every caller of the file differentiates what ``function`` returns (``rewards =
        score_batch(model, batch)``, then a loss of ``rewards`` and its ``backward()``): a step of
        training, whatever its name says."""
        sites = self.call_sites(function)
        return bool(sites) and all(
            isinstance(assign := self.tree.parent.get(site), cst.Assign) and assign.value is site and all(
                isinstance(t.target, cst.Name) and t.target.value in self.names_feeding_backward(
                    self.scopes.function_of(site) or self.tree.module) for t in assign.targets)
            for site in sites)

    def _result_differentiated(self, call: cst.Call) -> bool:
        """The caller differentiates what ``call`` returns (``loss = model.step(crops);
        loss.backward()``): the file's loss-computing method, not a library's ``step``."""
        assign = self.tree.parent.get(call)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1
                and isinstance(assign.targets[0].target, cst.Name)):
            return False
        scope = self.scopes.function_of(call) or self.tree.module
        return assign.targets[0].target.value in self.backwarded_names(scope)

    def runs_backward(self, function: cst.FunctionDef, depth: int = 0) -> bool:
        """A backward pass in the function's body, or in a function of the file it calls (its
        step moved into a helper: ``compute_step(self, batch)``)."""
        calls = self.scopes.scope_nodes(function, cst.Call)
        return any(self.backward_roots(c) for c in calls) or depth < 2 and any(
            (callee := self.callee(c)) is not None and isinstance(callee.function, cst.FunctionDef)
            and callee.function is not function and self.runs_backward(callee.function, depth + 1) for c in calls)

    def differentiates_what_others_ran(self, function: cst.FunctionDef) -> bool:
        """A backward (or ``torch.autograd.grad``) in the function's body and no forward pass of
        its own: it differentiates a graph its caller's forward made (activations its hooks kept),
        unlike an attack helper, which runs the forward it differentiates (once per function:
        asked for each call in an evaluation region)."""
        known = self._differentiates_others.get(function)
        if known is None:
            own = self.scopes.scope_nodes(function, cst.Call)
            known = self._differentiates_others[function] = any(self.backward_roots(c) for c in own) and \
                not any(self.is_forward_pass(c) for c in own)
        return known

    def models_from_eval_factories(self, scope: Scope) -> list[tuple[cst.Assign, cst.Call]]:
        """The assignments of ``scope`` that bind what a function of the file returns in eval
        mode (``model = get_model()``, also ``get_model().to(device)``, ``get_model`` ending
        ``model.eval(); return model`` with no other mode switch), each with that ``.eval()``
        (once per scope: asked for each forward pass in it)."""
        known = self._eval_factory_bindings.get(scope)
        if known is None:
            known = self._eval_factory_bindings[scope] = [
                (assign, switch) for assign in self.scopes.scope_nodes(scope, cst.Assign)
                if (switch := self._switched_by_its_factory(assign.value)) is not None]
        return known

    def _switched_by_its_factory(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        value = module_itself(value)
        callee = self.callee(value) if isinstance(value, cst.Call) else None
        factory = callee.function if callee is not None and callee.constructs is None else None
        if not isinstance(factory, cst.FunctionDef):
            return None
        switches = self.scopes.mode_switches(factory)
        returned = {r.value.value for r in self.scopes.scope_nodes(factory, cst.Return) if isinstance(r.value, cst.Name)}
        if len(switches) != 1 or not to_eval_mode(switches[0]) or not isinstance(switches[0].func.value, cst.Name) \
                or switches[0].func.value.value not in returned:
            return None
        return switches[0]

    def call_sites(self, function: Function) -> list[cst.Call]:
        return self._sites.get(function, [])

    def constructions(self, cls: cst.ClassDef) -> list[cst.Call]:
        """The calls of the file that build an object of ``cls`` (they run its ``__init__``)."""
        return [c for c in self.tree.nodes(cst.Call) if isinstance(c.func, cst.Name) and c.func.value == cls.name.value
                and (callee := self.callee(c)) is not None and callee.constructs is cls]

    # -- hooks -------------------------------------------------------------------------------
    @cached_property
    def forward_hooks(self) -> dict[Function, cst.Call]:
        """The file's functions registered as module forward hooks (by name, bound method,
        ``partial``, or returned by a factory: ``register_forward_hook(get_activation("fc"))``),
        with the registering call. PyTorch calls each on every forward pass of its module."""
        found: dict[Function, cst.Call] = {}
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in FORWARD_HOOK_REGISTRATIONS and call.args):
                continue
            hook = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "hook"),
                        call.args[0].value)
            for function in self.functions_given(hook, call):
                found.setdefault(function, call)
        return found

    @cached_property
    def step_closures(self) -> frozenset[Function]:
        """Functions handed to ``optimizer.step(closure)`` (directly or made by a factory):
        the optimizer calls each once or more per step."""
        found: set[Function] = set()
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "step" and call.args:
                found.update(self.functions_given(call.args[0].value, call))
        return frozenset(found)

    @cached_property
    def trial_objectives(self) -> frozenset[Function]:
        """Functions a hyper-parameter search calls once per trial: handed to
        ``study.optimize(objective)`` (optuna), ``fmin(fn=...)`` (hyperopt), ``gp_minimize`` (skopt),
        ``Tuner`` (Ray), directly, by a lambda, or by a factory."""
        found: set[Function] = set()
        for call in self.tree.nodes(cst.Call):
            name = call.func.attr.value if isinstance(call.func, cst.Attribute) else \
                call.func.value if isinstance(call.func, cst.Name) else ""
            if name not in SEARCH_DRIVERS or not call.args:
                continue
            given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("fn", "func")),
                         call.args[0].value)
            for function in self.functions_given(given, call):
                found.add(function)
                if isinstance(function, cst.Lambda):  # ``lambda t: objective(t, loader)``
                    for inner in self.tree.descendants(function.body, cst.Call):
                        callee = self.callee(inner)
                        if callee is not None and callee.function is not None and callee.constructs is None:
                            found.add(callee.function)
        return frozenset(found)

    def functions_given(self, expr: cst.BaseExpression, at: cst.CSTNode) -> list[Function]:
        """The functions of the file that passing ``expr`` as a callable hands over."""
        if isinstance(expr, cst.Lambda):
            return [expr]
        if isinstance(expr, cst.Call) and self.imports.qualify(expr.func) == "functools.partial" and expr.args:
            return self.functions_given(expr.args[0].value, at)
        if isinstance(expr, cst.Call):  # a factory: the nested functions it returns
            callee = self.callee(expr)
            if callee is None or not isinstance(callee.function, cst.FunctionDef):
                return []
            returned = {r.value.value for r in self.scopes.scope_nodes(callee.function, cst.Return)
                        if isinstance(r.value, cst.Name)}
            return [f for f in self.tree.descendants(callee.function.body, cst.FunctionDef)
                    if f.name.value in returned and self.scopes.function_of(f) is callee.function]
        resolved = self._resolve(expr, at, 1)
        return [resolved.function] if resolved is not None and resolved.function is not None \
            and resolved.constructs is None else []

    @cached_property
    def _by_spelling(self) -> dict[tuple[bool, str], list[cst.Call]]:
        """Every call of the file by how its callee is spelled: ``(False, "f")`` for ``f(...)``,
        ``(True, "m")`` for ``x.m(...)``, in source order."""
        spellings: dict[tuple[bool, str], list[cst.Call]] = {}
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Name):
                spellings.setdefault((False, func.value), []).append(call)
            elif isinstance(func, cst.Attribute):
                spellings.setdefault((True, func.attr.value), []).append(call)
        return spellings

    def result_target(self, site: cst.Call, index: Optional[int], width: int) -> Optional[cst.BaseExpression]:
        """What ``target = site`` binds the call's result to or, given ``index``, the element at
        ``index`` of the ``width`` targets it unpacks the result into (``a, b = f()``); None where
        the result is not assigned so."""
        assign = self.tree.parent.get(site)
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        if index is None:
            return target
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == width:
            return target.elements[index].value
        return None

    def calls_spelled(self, name: str, method: bool) -> list[cst.Call]:
        """The calls ``name(...)`` (``method``: ``x.name(...)``, whatever ``x`` is), unresolved."""
        return self._by_spelling.get((method, name), [])

    # -- forward passes --------------------------------------------------------------------
    def is_forward_pass(self, call: cst.Call) -> bool:
        """A call that runs a model or a loss function."""
        known = self._forward_passes.get(call)
        if known is None:
            self._forward_passes[call] = False  # (a method of the file that calls itself)
            known = self._forward_passes[call] = self._is_forward_pass(call)
        return known

    def _is_forward_pass(self, call: cst.Call) -> bool:
        func = call.func
        qualified = self.imports.qualify(func)
        if qualified is not None:
            if qualified.startswith("torch.nn.functional."):
                return bool(LOSS_SUFFIX.search(qualified)) or qualified.endswith(_FUNCTIONAL_LOSSES)
            return False
        if isinstance(func, cst.Call):  # nn.CrossEntropyLoss()(out, y)
            inner = self.imports.qualify(func.func) or ""
            return inner.startswith("torch.nn.") and inner.split(".")[-1][:1].isupper()
        if isinstance(func, cst.Name) and func.value == "self":
            # ``self(x)`` in a module calls its forward; in a plain class with its own ``__call__``
            # (a learner dispatching ``self("after_batch")`` to its callbacks), that method
            cls = self.scopes.self_class(self.scopes.function_of(call))
            return cls is None or self.scopes.is_torch_module_class(cls) or self.method_of(cls, "__call__") is None
        if isinstance(func, cst.Attribute):
            if func.attr.value == "forward":
                # (``rref.rpc_sync().forward(x)``: an RPC proxy's call runs on the remote owner)
                return not _rpc_proxy(func.value)
            if func.attr.value in FORWARD_METHODS or _FORWARD_METHOD.match(func.attr.value):
                receiver = func.value
                if isinstance(receiver, cst.Name) and receiver.value == "self":
                    method = self.scopes.function_of(call)
                    cls = self.scopes.self_class(method)
                    own = self.method_of(cls, func.attr.value) if cls is not None else None
                    if own is not None:  # (``self.decode(ids)`` of a Lightning module that only detokenizes)
                        return any(self.is_forward_pass(c)
                                   for c in self.scopes.scope_nodes(own, cst.Call))
                    return self.scopes.of_module_class(method)
                return is_model_name(terminal_name(receiver))
        if self.modules.submodule_attribute(func):  # self.fc1(x) where __init__ made fc1 a module
            return True
        if isinstance(func, cst.Name) and (cls := self.class_named_for(func, call)) is not None and \
                self.scopes.is_torch_module_class(cls):
            return True  # ``predictor(h_i, h_j)`` with ``predictor`` a parameter and ``LinkPredictor`` a module
        if is_model_name(self._stored_parameter_name(func, call) or ""):
            return True  # ``self.mnetwork(x)`` where ``__init__`` did ``self.mnetwork = network``
        if isinstance(func, cst.Attribute) and (cls := self.stored_parameter_class(func, call)) is not None and \
                self.scopes.is_torch_module_class(cls):
            return True  # ``self.memory(f, y)``: ``__init__`` stored ``memory``, and ``HybridMemory`` is a module
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and \
                func.attr.value in self._attributes_put_in_a_mode:
            return True  # ``self.denoiser = denoiser.to(device).eval()``: only a module has a mode
        if isinstance(func, cst.Subscript) and len(func.slice) == 1 and isinstance(func.slice[0].slice, cst.Index) \
                and isinstance(func.slice[0].slice.value, cst.SimpleString):
            return is_model_name(terminal_name(func.value))  # ``self.model["generator"](x)``: one of a dict of models
        name = terminal_name(func)
        if name is None or is_class_name(name):
            return False  # ``Net()`` builds a model, it does not run one
        if isinstance(func, cst.Name) and name[:1].isupper() and name not in EXACT_MODEL_NAMES and (
                name in self.scopes.classes_by_name or name in self.imports.aliases):
            return False  # ``MLP(bias=True)``: an acronym class of this file or imported, constructed
        if isinstance(func, cst.Name) and name in self.scopes.functions_by_name:
            return False  # ``test_model(net, loader)``: a helper of this file, read through its body
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and \
                self._own_method(call, name):
            return False  # ``self.eval_model(...)``: a method of this class, read through its body
        if self._bound_to_gradient_explainer(func):
            return False  # ``gb_model(x)`` of ``GuidedBackpropReLUModel(model)`` runs a backward itself
        # (``op(x, u, y)`` in a loss's ``__call__(self, op, ...)``: every caller hands it a model)
        # (``diffusion.training_losses(model, x, t)``: a helper that runs the model for its losses)
        return is_model_name(name) or self._bound_to_module(func) or dotted_name(func) in self._with_parameters_read or \
            isinstance(func, cst.Name) and self._parameter_given_models(func, call) or \
            name.endswith("_losses") and bool(call.args) or _objective_of_outputs(name, call)

    @cached_property
    def _attributes_put_in_a_mode(self) -> frozenset[str]:
        """Attributes of ``self`` the file switches to a mode (``self.denoiser.eval()``), or
        assigns a module switched to one (``self.denoiser = denoiser.to(device).eval()``)."""
        found = set()
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if not (type(func) is cst.Attribute and func.attr.value in ("eval", "train") and (not call.args or (
                    func.attr.value == "train" and len(call.args) == 1 and dotted_name(call.args[0].value) in ("True", "False")))):
                continue  # (a mode is no argument or one flag: not ``tokenizer.train(files)``)
            receiver = module_itself(func.value)
            if isinstance(receiver, cst.Attribute) and dotted_name(receiver.value) == "self":
                found.add(receiver.attr.value)
            parent = self.tree.parent.get(call)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and \
                    isinstance(target := parent.targets[0].target, cst.Attribute) and dotted_name(target.value) == "self":
                found.add(target.attr.value)
        return frozenset(found)

    @cached_property
    def _with_parameters_read(self) -> frozenset[str]:
        """What the file reads the parameters of, as spelled (``ac.q1`` of
        ``chain(ac.q1.parameters(), ...)``, ``net`` of ``Adam(net.parameters())``): modules,
        whatever they are named. (Not ``next(m.parameters()).device``: inference code asks any
        module, or a wrapper that may be none, where it is.)"""
        parent = self.tree.parent
        return frozenset(
            spelled for call in self.tree.nodes(cst.Call)
            if type(call.func) is cst.Attribute and call.func.attr.value in ("parameters", "named_parameters")
            and not call.args and (spelled := dotted_name(call.func.value)) is not None
            and not (isinstance(outer := parent.get(parent.get(call)), cst.Call) and dotted_name(outer.func) == "next"))

    def _own_method(self, call: cst.Call, name: str) -> bool:
        """``name`` is a method of the (non-module) class whose method makes ``call``."""
        caller = self.scopes.function_of(call)
        cls = self.scopes.class_of(caller) if caller is not None else None
        return cls is not None and not self.scopes.is_torch_module_class(cls) and \
            any(self.scopes.class_of(f) is cls for f in self.scopes.functions_by_name.get(name, ()))

    def _bound_to_gradient_explainer(self, func: cst.BaseExpression) -> bool:
        """A name bound only to an attribution method made from a model (Grad-CAM, guided
        backprop, saliency, integrated gradients): calling it differentiates the model."""
        if not isinstance(func, cst.Name):
            return False
        bindings = self.scopes.reaching_bindings(func.value, func)
        return bool(bindings) and all(
            isinstance(b.value, cst.Call) and GRADIENT_EXPLAINER.search(
                (self.imports.qualify(b.value.func) or terminal_name(b.value.func) or "").rsplit(".", 1)[-1])
            is not None for b in bindings)

    def is_loss_function_call(self, call: cst.Call) -> bool:
        """A forward pass of a loss function: ``criterion(out, y)``, ``F.cross_entropy(...)``,
        ``nn.MSELoss()(out, y)``."""
        func = call.func
        if isinstance(func, cst.Call):
            func = func.func
        qualified = self.imports.qualify(func)
        if qualified is not None and qualified.startswith("torch."):
            return qualified.startswith("torch.nn.") and (
                bool(LOSS_SUFFIX.search(qualified)) or qualified.endswith(_FUNCTIONAL_LOSSES))
        if any((built.startswith("nn.") or self.imports.qualify_dotted(built).startswith("torch.nn."))
               and LOSS_SUFFIX.search(built) for built in self.scopes.classes_built_into(func, call)):
            return True  # ``self.mse(pred, v)`` where ``__init__`` did ``self.mse = torch.nn.MSELoss()``
        names = [terminal_name(func) or ""]
        if isinstance(func, cst.Name):  # ``fn`` of ``for task, fn in loss_fns.items()``: named by its mapping
            names += [_mapping_iterated_for(b.node, func.value) or ""
                      for b in self.scopes.reaching_bindings(func.value, func) if isinstance(b.node, cst.For)]
        # (a loss of another package: litgpt's ``chunked_cross_entropy``, a project's ``nll_loss``)
        return any("loss" in lowered or "criterion" in lowered or "crit" in lowered.split("_")
                   or lowered.endswith(_FUNCTIONAL_LOSSES) or _objective_of_outputs(lowered, call)
                   for lowered in map(str.lower, names))

    def _parameter_given_models(self, func: cst.Name, call: cst.Call) -> bool:
        """``func`` is a parameter of the function making ``call`` to which every call of that
        function in the file hands a model (``self.loss_fn(operator, x, y)``, ``operator``
        switched to a mode or bound to a module)."""
        function = self.scopes.function_of(call)
        if function is None or not self.scopes.is_parameter(func.value, call):
            return False
        given = self.given_by_every_caller(function, func.value)
        # (not a layer a loop over a model's blocks hands on: ``state.step(block)`` in ``forward``)
        return bool(given) and all(self.names_a_model(expr) and not (isinstance(expr, cst.Name) and any(
            isinstance(b.node, cst.For) for b in self.scopes.reaching_bindings(expr.value, expr))) for expr, _ in given)

    def given_by_every_caller(self, function: Function, param: str) -> list[tuple[cst.BaseExpression, cst.Call]]:
        """What each call of ``function`` in the file hands to its parameter ``param``, with the call."""
        return [(expr, site) for site in self.call_sites(function) if (callee := self.callee(site)) is not None
                for expr, _ in self.arguments(site, callee).get(param, ())]

    def names_a_model(self, expr: cst.BaseExpression) -> bool:
        """``model``, ``self.net``, or a name (or attribute of ``self``) bound to a module or
        switched to a mode; not a loss (``val_loss``, ``criterion``), which ``is_model_name`` counts."""
        name = terminal_name(expr) or ""
        if "loss" in name.lower() or "criterion" in name.lower():
            return False
        return is_model_name(name) or self._bound_to_module(expr) or \
            isinstance(expr, cst.Attribute) and dotted_name(expr.value) == "self" and \
            expr.attr.value in self._attributes_put_in_a_mode

    def _bound_to_module(self, func: cst.BaseExpression) -> bool:
        """A name bound in this scope to ``nn.Something(...)`` or a Module class of this file (or,
        where the function binds no such name, so at module level: ``policy = Policy()`` read by the
        file's functions), or put in a mode before (``feature_extractor.train()``)."""
        if not isinstance(func, cst.Name):
            return False
        scope = self.scopes.scope_of(func)
        bindings = self.scopes.reaching_bindings(func.value, func)
        if not bindings and scope is not self.tree.module and func.value not in self.scopes.bindings(scope):
            bindings = self.scopes.bindings(self.tree.module).get(func.value, [])
        for binding in bindings:
            if isinstance(binding.node, cst.For):
                target = self.modules.submodule_loop_target(binding.node)
                if isinstance(target, cst.Name) and target.value == func.value:
                    return True  # ``for block in self.blocks: x = block(x)``
                if _entry_of_models(binding.node, func.value):
                    return True  # ``for name, fn in self.criterion.items(): term = fn(pred, gt)``
            value = binding.value
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                    value.func.attr.value in ("to", "cuda"):
                value = value.func.value
            if isinstance(value, cst.Call):
                qualified = self.imports.qualify(value.func) or ""
                if qualified.startswith("torch.nn.") and qualified.split(".")[-1][:1].isupper():
                    return qualified.rsplit(".", 1)[-1] not in PARAMETER_FREE_MODULES
                cls = self.scopes.classes_by_name.get(dotted_name(value.func) or "")
                if self.scopes.is_torch_module_class(cls) or \
                        value is not binding.value and self.modules.is_constructor(binding.value):
                    return True  # (also another package's class moved to a device: ``lpips.LPIPS(net="vgg").to(device)``)
        return self.scopes.switched_to_a_mode(func, training_too=True)

    # -- backward passes -------------------------------------------------------------------
    def backward_roots(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The expressions a backward call differentiates, or [] if it is no backward call
        (asked of each call again and again by the loops around it: answered once)."""
        known = self._backward_roots.get(call)
        if known is None:
            known = self._backward_roots[call] = self._roots_of(call)
        return known

    def _roots_of(self, call: cst.Call) -> list[cst.BaseExpression]:
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
                names.update(n.value for n in self.tree.descendants(root, cst.Name) if not self._divides(n))
        names.discard("self")
        self._backwarded[scope] = names
        return names

    def is_differentiated(self, name: cst.Name) -> bool:
        """A backward pass of ``name``'s scope differentiates the value ``name`` reads: one of the
        same binding (not ``loss.backward()`` of an earlier ``loss`` the name was rebound from, as a
        meta-learner does before ``loss = F.mse_loss(updated(x), y); loss_sum += loss``)."""
        scope = self.scopes.scope_of(name)
        if name.value not in self.backwarded_names(scope):
            return False
        reaching = {b.node for b in self.scopes.reaching_bindings(name.value, name)}
        return any(
            n.value == name.value and not self._divides(n) and (
                not reaching or not reaching.isdisjoint(b.node for b in self.scopes.reaching_bindings(n.value, n)))
            for call in self.scopes.scope_nodes(scope, cst.Call) for root in self.backward_roots(call)
            for n in self.tree.descendants(root, cst.Name))

    def _divides(self, name: cst.Name) -> bool:
        """``n`` of ``(loss / n).backward()``: a count that scales the loss (gradient accumulation,
        truncated BPTT), not something differentiated."""
        parent = self.tree.parent.get(name)
        return isinstance(parent, cst.BinaryOperation) and parent.right is name and \
            isinstance(parent.operator, (cst.Divide, cst.FloorDivide))

    def names_feeding_backward(self, scope) -> set[str]:
        """Names whose values flow into a backward pass of ``scope`` (through the assignments
        that reach it): ``log_probs`` in ``loss = -torch.stack(log_probs).sum(); loss.backward()``.
        Keeping such values is how gradient accumulation and REINFORCE work, not a leak. (An
        assignment made after the backward, ``loss = total_loss / n`` once the loop is done, does
        not make ``total_loss`` feed it.)"""
        cached = self._feeding_backward.get(scope)
        if cached is not None:
            return cached
        bindings = self.scopes.bindings(scope)
        self._feeding_backward[scope] = set()  # (recursion guard: helpers calling each other)
        pending: list[tuple[str, cst.CSTNode]] = [
            (name, call) for call in self.scopes.scope_nodes(scope, cst.Call) for name in self._differentiated_at(call, scope)]
        feeding = {name for name, _ in pending}
        seen: set[tuple[str, cst.CSTNode]] = set()
        while pending:
            name, at = pending.pop()
            if (name, at) in seen:
                continue
            seen.add((name, at))
            for binding in self.scopes.reaching_bindings(name, at):
                if binding.augmented:  # (``total += loss`` carries the old ``total`` too)
                    pending.append((name, binding.node))
                if binding.value is None:
                    continue
                for inner in self.names_keeping_graph(binding.value):
                    if inner in bindings:
                        feeding.add(inner)
                        pending.append((inner, binding.node))
        self._feeding_backward[scope] = feeding
        return feeding

    def _differentiated_at(self, call: cst.Call, scope) -> list[str]:
        """The names a backward ``call`` differentiates (``backwarded_names``), or that it hands
        to a helper of the file in whose body that parameter feeds a backward pass
        (``update_policy(optimizer, log_probs, rewards)`` differentiating ``torch.stack(log_probs)``)."""
        names = [n.value for root in self.backward_roots(call) for n in self.tree.descendants(root, cst.Name)
                 if not self._divides(n) and n.value != "self"]
        callee = self.callee(call)
        if callee is not None and callee.function is not scope:
            names += [expr.value for expr, _ in self.arguments_differentiated(call) if isinstance(expr, cst.Name)]
        return names

    def names_keeping_graph(self, expr: cst.BaseExpression) -> list[str]:
        """The names in ``expr`` whose graph the value may keep: not those read only under
        ``.detach()``, ``.item()``, ``.data`` and the like."""
        names = []
        parent = self.tree.parent
        for name in self.tree.descendants(expr, cst.Name):
            node = name
            while node is not expr:
                node = parent[node]
                if type(node) is cst.Attribute and (node.attr.value in GRAPH_BREAKING_METHODS or node.attr.value in DETACHED_TENSOR_ATTRIBUTES) and node.attr is not name:
                    break  # (``x.data``, and the receiver of ``x.detach()``)
            else:
                names.append(name.value)
        return names

    def arguments_differentiated(self, call: cst.Call) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """What ``call`` hands to parameters of a function of the file that feed its backward pass
        (``update_policy(optimizer, log_probs)``, ``self.backprop(out["loss"])``), with the node to
        evaluate each at."""
        callee = self.callee(call)
        if callee is None or not isinstance(callee.function, cst.FunctionDef):
            return []
        inside = self.names_feeding_backward(callee.function)
        return [(expr, where) for param, given in self.arguments(call, callee).items() if param in inside
                for expr, where in given]


def _objective_of_outputs(name: str, call: cst.Call) -> bool:
    """``self.objective(pred, labels)``: a training objective (pytracking's loss module) given
    outputs and targets; not an Optuna ``objective(trial)``."""
    return "objective" in name.lower().split("_") and len(call.args) >= 2


def _is_static(func: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in func.decorators)


def _is_stub(func: cst.FunctionDef) -> bool:
    """A body that does nothing but declare the method: ``...``, ``pass``, a docstring, or
    ``raise NotImplementedError``."""
    lines: list = []
    for statement in func.body.body:  # statements, or the small statements of ``def f(): ...``
        if isinstance(statement, cst.SimpleStatementLine):
            lines.extend(statement.body)
        elif isinstance(statement, cst.BaseSmallStatement):
            lines.append(statement)
        else:
            return False
    for line in lines:
        if isinstance(line, cst.Pass) or isinstance(line, cst.Expr) and isinstance(
                line.value, (cst.Ellipsis, cst.SimpleString, cst.ConcatenatedString)):
            continue
        exception = line.exc.func if isinstance(line, cst.Raise) and isinstance(line.exc, cst.Call) else \
            getattr(line, "exc", None)
        if isinstance(line, cst.Raise) and exception is not None and dotted_name(exception) == "NotImplementedError":
            continue
        return False
    return True


_UNKNOWN = object()


def _literal(expr: Optional[cst.BaseExpression]) -> object:
    """The Python value of ``True``, ``False``, ``None`` or a string literal; ``_UNKNOWN`` else."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    return _UNKNOWN


def _decided(test: cst.BaseExpression, known: dict[str, object]) -> Optional[bool]:
    """The truth of ``train``, ``not train``, ``optimizer is None``, ``mode == "train"`` (and
    their negations) given the parameters' known values; None where it is not decided."""
    if isinstance(test, cst.Name):
        return bool(known[test.value]) if test.value in known else None
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _decided(test.expression, known)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name) \
            and test.left.value in known:
        target = test.comparisons[0]
        other = _literal(target.comparator)
        if other is _UNKNOWN:
            return None
        value = known[test.left.value]
        operator = type(target.operator)
        if operator in (cst.Is, cst.Equal):
            return value == other
        if operator in (cst.IsNot, cst.NotEqual):
            return value != other
    return None
