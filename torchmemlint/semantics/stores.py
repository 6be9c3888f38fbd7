"""Where values are kept: stores into containers, accumulations into names, and the stores a call
makes out of sight — the called function (or a function it calls) keeps one of its parameters on
``self``, in a global, or in a container it was handed (``meter.update(loss)`` where ``update``
does ``self.sum += val * n``; ``buffer.push(state, log_prob)`` appending a ``Transition(*args)``;
``log(history, loss)`` doing ``history.append(loss)``). And whether the container or accumulator
outlives the iteration that produced the value."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.semantics.autograd import METADATA_ATTRIBUTES
from torchmemlint.semantics.calls import Calls, Function
from torchmemlint.semantics.flow import MODULE, TENSOR, Flow
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.iterations import Iteration, Iterations
from torchmemlint.semantics.scopes import (ITEM_GETTERS, Loop, Scopes, accumulator_name, first_param, is_step_call,
                                           parameter_names, root_name, tests_every_n_steps)
from torchmemlint.semantics.tree import Tree, deleted
from torchmemlint.semantics.vocabulary import JOIN_FUNCTIONS, LOADER_ITERABLE, METER_CLASS, METER_METHODS, STORING_METHODS

_BOUNDED_FACTORIES = frozenset({"collections.deque", "deque"})
# The count of an epoch's steps (``steps_per_epoch``, ``num_batches``), not of a few repeats.
_STEPS_OF_AN_EPOCH = re.compile(r"(steps|iters|iterations|batches)_per_|(^|_)(num|n)_(batches|iters|iterations)($|_)",
                                re.IGNORECASE)
# Methods that keep every argument (a replay buffer's ``push(state, action, reward)``); ``append``
# and friends keep their one argument.
_MULTI_ARGUMENT_STORES = frozenset({"push", "add"})
# Meters of other files (``AverageMeter`` of the PyTorch ImageNet example and its many copies,
# torchnet's ``AverageValueMeter``) add what ``update``/``add`` get into running sums.
_STORING_OR_METERING = STORING_METHODS | METER_METHODS
MAX_CALLER_DEPTH = 3


@dataclass(frozen=True)
class Store:
    """``container`` receives ``value`` at ``node`` (``c.append(v)``, ``c[k] = v``, ``c += [v]``,
    or a call whose callee keeps its argument: then ``inside`` is the store in the callee)."""

    node: cst.CSTNode
    container: cst.BaseExpression
    value: cst.BaseExpression
    key: Optional[cst.BaseSlice] = None  # the subscript of ``c[k] = v``
    appended: bool = True  # grows a container (False: added into a running total)
    inside: Optional[cst.CSTNode] = None
    computed: bool = False  # the callee keeps what it computes from ``value``, not ``value`` itself
    device_only: bool = False  # the callee keeps ``value`` detached (``z.detach()``): its device, not its graph
    host: bool = False  # the callee keeps ``value`` moved to the host (``z.cpu()``): its graph, not its device
    # ``value`` is what a callee made and kept (``memory.logprobs.append(log_prob)`` in ``act(state,
    # memory)``), an expression of the callee: what it holds is read where ``inside`` is.
    made_inside: bool = False
    joined: bool = False  # the callee joins ``value`` onto a tensor it keeps (``Kept.joined``)
    scalar: bool = False  # the callee keeps a 0-dim reduction of ``value`` (``Kept.scalar``)
    # kept by a torchmetrics metric's list state: on the device by design (its graph is the leak)
    by_metric: bool = False

    @property
    def overwrites_fixed_slot(self) -> bool:
        """``c["loss"] = v``: a literal key holds only the newest value, so nothing accumulates."""
        return self.key is not None and _is_literal(self.key)


@dataclass(frozen=True)
class Accumulation:
    """``target`` is updated from its own value and ``value``: ``t += v`` or ``t = t + v``."""

    node: Union[cst.AugAssign, cst.Assign]
    target: cst.BaseExpression
    value: cst.BaseExpression


@dataclass(frozen=True)
class JoinAccumulation:
    """``acc = torch.cat([acc, piece], ...)``, or ``acc = piece if acc is None else torch.cat(...)``."""

    site: cst.Assign
    target: cst.BaseExpression
    name: str
    join: cst.Call
    qualified: str
    piece: cst.BaseExpression
    prepends: bool
    guard: Optional[cst.IfExp]


@dataclass(frozen=True)
class Kept:
    """A function keeps (what derives from) its parameter ``param`` beyond the call: on its
    instance (``into`` "self"), in a container it receives as parameter ``into`` ("param:NAME"),
    or in a global; ``store`` is where, in the function or one it calls."""

    param: str
    into: str
    store: cst.CSTNode
    container: cst.BaseExpression
    appended: bool
    # What is kept is computed from the parameter (``self.total += psnr.sum()``), not the object
    # itself: called under ``torch.no_grad()``, it holds no graph.
    computed: bool = False
    # What is kept is detached from the parameter (``logs.append(z.detach())``): its device only.
    device_only: bool = False
    # What is kept is on the host (``logs.append(z.cpu())``): its graph only.
    host: bool = False
    # A graph the function makes itself and keeps in a container it is handed (``param`` is empty;
    # ``value`` is the kept expression, at ``store``).
    made_inside: bool = False
    value: Optional[cst.BaseExpression] = None
    # Kept by joining it onto a tensor (``self.preds = torch.cat([self.preds, preds])``): that the
    # tensor grows is TML008's finding there; what a caller's graph costs is the caller's.
    joined: bool = False
    # What is kept is a 0-dim reduction computed from the parameter (``errors.append((p -
    # y).abs().mean())``): one small block per call, whatever the caller passes.
    scalar: bool = False


class Stores:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls, flow: Flow,
                 iterations: Iterations) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls
        self.flow = flow
        self.iterations = iterations
        self._kept: dict[Function, list[Kept]] = {}
        self._resets: dict[cst.CSTNode, dict[str, list[cst.CSTNode]]] = {}
        self._backward_in: dict[cst.FunctionDef, bool] = {}
        self._differentiated_spellings: dict[str, bool] = {}
        self._class_resets: dict[cst.ClassDef, dict[str, list[cst.FunctionDef]]] = {}
        self._written_attributes: dict[cst.ClassDef, dict[cst.FunctionDef, set[str]]] = {}
        self._statement_positions: dict[cst.CSTNode, dict[cst.CSTNode, int]] = {}

    # -- visible stores ------------------------------------------------------------------------
    @cached_property
    def visible(self) -> list[Store]:
        """Stores written out in the file (``c.append(v)``, ``c[k] = v``, ``c += [v]``), except
        calls of a method the file defines, which are judged by its body (``stores``)."""
        found = []
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in _STORING_OR_METERING and call.args):
                continue
            if self.imports.qualify(func) is not None:  # torch.add(a, b), np.append(a, b): functions, not stores
                continue
            if func.attr.value in METER_METHODS and self.flow.value(func.value, call).kind == MODULE:
                continue  # ``self.skip_add.add(x, y)``: a quantization FloatFunctional computes, keeps nothing
            callee = self.calls.callee(call)
            if callee is not None and callee.function is not None:
                continue
            if func.attr.value in METER_METHODS and self._is_meter_of_another_file(func.value, call):
                found.append(Store(call, func.value, call.args[0].value, appended=False))
                continue
            if func.attr.value == "update":
                # ``dict.update(other)``, ``ema.update(model)``: no new element of its own, unless it
                # is handed entries built here (``results.update({i: out for i, out in zip(ids, outputs)})``)
                entries = call.args[0].value
                if len(call.args) == 1 and isinstance(entries, cst.DictComp):
                    found.append(Store(call, func.value, entries.value, key=entries.key))
                continue
            if func.attr.value == "insert":
                values = [call.args[-1].value]
            elif func.attr.value in _MULTI_ARGUMENT_STORES:
                values = [a.value for a in call.args if a.keyword is None or a.keyword.value not in ("maxlen",)]
            else:
                values = [call.args[0].value]
            found.extend(Store(call, func.value, value) for value in values)
        for assign in self.tree.nodes(cst.Assign):
            for target in assign.targets:
                subscript = target.target
                if isinstance(subscript, cst.Subscript):
                    key = subscript.slice[0] if len(subscript.slice) == 1 else None
                    container = subscript.value
                    # ``tracker[idx]["x"] = z`` fills a field of the entry ``idx`` adds: it is the
                    # outer key that grows the container
                    while isinstance(container, cst.Subscript) and len(container.slice) == 1 and key is not None and \
                            isinstance(_key_expression(key), (cst.SimpleString, cst.Integer)):
                        container, key = container.value, container.slice[0]
                    found.append(Store(assign, container, assign.value, key))
        for aug in self.tree.nodes(cst.AugAssign):
            if isinstance(aug.operator, cst.AddAssign) and isinstance(aug.value, cst.List):
                found.extend(Store(aug, aug.target, element.value) for element in aug.value.elements)
        return found

    @cached_property
    def _visible_by_function(self) -> dict[Optional[cst.FunctionDef], list[Store]]:
        """The visible stores by the function they are in (one pass, not one per function asked)."""
        by_function: dict[Optional[cst.FunctionDef], list[Store]] = {}
        for store in self.visible:
            by_function.setdefault(self.scopes.function_of(store.node), []).append(store)
        return by_function

    def _is_meter_of_another_file(self, receiver: cst.BaseExpression, at: cst.CSTNode) -> bool:
        return any(METER_CLASS.search(name.rsplit(".", 1)[-1]) and name not in self.scopes.classes_by_name
                   for name in self.scopes.classes_built_into(receiver, at))

    def stores(self, appended_only: bool = False) -> Iterator[Store]:
        """Every store: the visible ones, then one per argument a called function keeps."""
        for store in self.visible:
            if not (appended_only and not store.appended):
                yield store
        for call in self.tree.nodes(cst.Call):
            yield from self.stores_through(call, appended_only)

    def stores_through(self, call: cst.Call, appended_only: bool = False) -> Iterator[Store]:
        """The stores ``call`` makes through its callee: one per argument the callee keeps, the
        container spelled as the caller sees it (the receiver, or the container it passes)."""
        callee = self.calls.callee(call)
        if callee is None and self._modules_updating_themselves:
            callee = self.calls.module_forward(call, self._modules_updating_themselves)
        if callee is None:  # ``metric.process(state)``: what any of the file's ``process`` methods keeps
            for candidate in self.calls.candidates(call):
                yield from self._kept_through(call, candidate, appended_only)
            metric = self.calls.list_state_metric(call)
            if metric is not None:  # ``auroc(preds, labels)``: a torchmetrics list state keeps each input
                for arg in call.args:
                    if arg.keyword is None and arg.star == "":
                        yield Store(call, metric, arg.value, by_metric=True)
            return
        yield from self._kept_through(call, callee, appended_only)

    def _kept_through(self, call: cst.Call, callee, appended_only: bool) -> Iterator[Store]:
        if callee.function is None or callee.constructs is not None:
            return
        kept = self.kept_parameters(callee.function)
        if not kept:
            return
        arguments = self.calls.arguments(call, callee)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        called = call.func.attr.value if isinstance(call.func, cst.Attribute) else \
            call.func.value if isinstance(call.func, cst.Name) else None
        if isinstance(callee.function, cst.FunctionDef) and called not in (None, callee.function.name.value) and \
                callee.skipped == 1 and not callee.prefix:
            receiver = call.func  # ``self.knn(feats)``, ``mape(preds, y)``: the object called runs its ``__call__``
        disabled = None
        for keep in kept:
            if appended_only and not keep.appended:
                continue
            device_only = keep.device_only
            if keep.made_inside and keep.into.startswith("param:"):
                given = arguments.get(keep.into[len("param:"):])
                if given and not self.flow.grad.is_disabled(call):
                    yield Store(call, given[0][0], keep.value, appended=keep.appended, inside=keep.store,
                                computed=True, made_inside=True)
                continue
            if keep.computed and not keep.device_only:  # (no graph under no_grad; the device stays)
                # (around the call, or in the callee itself: a torchmetrics ``Metric.update``)
                disabled = self.flow.grad.is_disabled(call) or isinstance(callee.function, cst.FunctionDef) and \
                    self.flow.grad.is_function_disabled(callee.function) if disabled is None else disabled
                if disabled and (keep.host or keep.scalar or self._in_callees_own_step_loop(keep.store, callee.function)):
                    continue  # (a callee iterating its own loader keeps it there, a finding of its own)
                # (what it computes from a device tensor is on the device still: ``pred.squeeze()``)
                device_only = disabled
            if keep.into == "self":
                container = receiver
            elif keep.into.startswith("param:"):
                given = arguments.get(keep.into[len("param:"):])
                container = given[0][0] if given else None
            else:
                container = keep.container
            if container is None:
                continue
            for value, _ in arguments.get(keep.param, ()):
                yield Store(call, container, value, appended=keep.appended, inside=keep.store, computed=keep.computed,
                            device_only=device_only, host=keep.host, joined=keep.joined, scalar=keep.scalar)

    def _in_callees_own_step_loop(self, store: cst.CSTNode, function) -> bool:
        iteration = self.iterations.step_iteration(store)
        return isinstance(iteration, (cst.For, cst.While)) and self.scopes.function_of(iteration) is function

    @cached_property
    def _modules_updating_themselves(self) -> frozenset[cst.ClassDef]:
        """Module classes of the file a method of which other than ``__init__`` assigns an
        attribute of ``self`` (``self.total += n``) or appends to one (a stateful metric's
        ``self.preds.append(preds)``): the only ones whose calls can keep anything (found once
        per file, so that a file of modules without state pays nothing per call)."""
        return frozenset(
            cls for cls in self.scopes.classes_by_name.values() if self.scopes.is_torch_module_class(cls) and (any(
                (method := self.scopes.function_of(a.node)) is not None and method.name.value != "__init__"
                for assigned in self.flow.self_assignments(cls).values() for a in assigned)
                or any(self.flow.self_list_growth(cls).values())))

    # -- what a function keeps ------------------------------------------------------------------
    def kept_parameters(self, function: Function) -> list[Kept]:
        """The parameters ``function`` keeps beyond its call (see ``Kept``). What another method
        of the class empties (a REINFORCE policy's ``put_data``, emptied after the backward that
        differentiates it; a rollout buffer's ``clear``) is not kept."""
        known = self._kept.get(function)
        if known is not None:
            return known
        self._kept[function] = []  # recursion guard
        if not isinstance(function, cst.FunctionDef):
            return []
        cls = self.scopes.self_class(function)
        params = parameter_names(function)
        if isinstance(function.params.star_arg, cst.Param):
            params.add(function.params.star_arg.name.value)
        if function.params.star_kwarg is not None:  # ``def log(self, **metrics)``: each keyword's value
            params.add(function.params.star_kwarg.name.value)
        if cls is not None:
            params.discard(first_param(function))
        found: list[Kept] = []
        candidates = list(self._visible_by_function.get(function, ()))
        candidates += [s for call in self.scopes.scope_nodes(function, cst.Call) for s in self.stores_through(call)]
        for store in candidates:
            if store.overwrites_fixed_slot:
                continue
            into = self._persistent_root(store.container, function, cls)
            if into is None or (into == "self" and self.differentiated_and_emptied(store.container, function)):
                continue  # (a REINFORCE policy's ``put_data``: emptied by the method that differentiates it)
            if self._is_bounded(store.container, store.node) or self._writes_into_an_array(store):
                # (a replay memory's ``deque(maxlen=capacity)``: it never grows past its size; a
                # slot of ``np.zeros(size)`` takes a copy of the number)
                continue
            # An item assignment (``buf[i] = v``) grows a dict, never a list or a tensor: as seen
            # from a caller that passes some container, it is no append.
            appended = store.appended and store.key is None
            if store.made_inside:  # (handed on: the caller's caller passes the container)
                if into.startswith("param:"):
                    found.append(Kept("", into, store.inside, store.container, appended, computed=True,
                                      made_inside=True, value=store.value))
                continue
            value = self.flow.value(store.value, store.node)
            if into.startswith("param:") and value.graph and not value.params and store.inside is None \
                    and not self.never_grows(store):
                # ``memory.logprobs.append(log_prob)``: a graph made here, kept in the caller's container
                found.append(Kept("", into, store.node, store.container, appended, computed=True,
                                  made_inside=True, value=store.value))
            for param in sorted((value.params | value.device_params) & params):  # (sorted: the same report each run)
                if into != f"param:{param}":  # (a container storing what it already holds)
                    found.append(Kept(param, into, store.inside or store.node, store.container, appended,
                                      computed=store.computed or value.alias != param and not _packs(store.value, param),
                                      device_only=store.device_only or param not in value.params,
                                      host=store.host or _on_host(value, param), joined=store.joined,
                                      scalar=store.scalar or value.scalar and value.kind == TENSOR))
        for accumulation in self.accumulations():
            if self.scopes.function_of(accumulation.node) is not function:
                continue
            into = self._persistent_root(accumulation.target, function, cls)
            if into is None or (into == "self" and root_name(accumulation.target) == first_param(function) and
                                self._rebound_in(function, accumulation.target, accumulation.node)):
                continue  # (``entry = self.sums.setdefault(k, {...})`` rebinds a local name, not what it holds)
            if into == "self" and self._reset_in_each_step_loop(accumulation.target, function):
                continue
            if self.flow.grad.is_disabled(accumulation.node):
                continue  # (``with torch.no_grad(): self.total += outputs.loss``: a sum without a graph)
            value = self.flow.value(accumulation.value, accumulation.node)
            for param in value.params & params:
                found.append(Kept(param, into, accumulation.node, accumulation.target, False,
                                  computed=value.alias != param))
        for join in self.join_accumulations:
            if self.scopes.function_of(join.site) is not function:
                continue
            into = self._persistent_root(join.target, function, cls)
            if into is None or isinstance(join.target, cst.Name) and into != "global":
                continue  # (a join rebinds: a parameter's name, even a static method's first, is local)
            value = self.flow.value(join.piece, join.site)
            for param in value.params & params:
                found.append(Kept(param, into, join.site, join.target, True, computed=value.alias != param,
                                  joined=True))
        self._kept[function] = found
        return found

    def _persistent_root(self, container: cst.BaseExpression, function: cst.FunctionDef,
                         cls: Optional[cst.ClassDef], depth: int = 0) -> Optional[str]:
        """Where a container a function stores into lives: on ``self`` (not rebuilt in the
        function itself), in a parameter the caller passes, or in a global; None for a local."""
        root = root_name(container)
        if root is None:
            return None
        if cls is not None and root == first_param(function):
            return None if self._rebound_in(function, container) else "self"
        bindings = self.scopes.bindings(function).get(root, [])
        if any(isinstance(b.node, cst.Param) for b in bindings):
            return f"param:{root}" if all(isinstance(b.node, cst.Param) for b in bindings) else None
        if bindings and root not in self.scopes.global_names(function):
            if depth > 4:
                return None  # (``a = b[0]`` and ``b = a.parts``: a cycle of holders)
            # ``meter = self.meters.setdefault(name, AverageMeter())``, ``for meter in self.meters.values()``
            # (``for key, meter in self.meters.items()``, in each loop that binds it): an object
            # another container holds lives where that container lives
            roots = {self._persistent_root(held_by, function, cls, depth + 1) if held_by is not None and
                     root_name(held_by) not in (None, root) else None
                     for held_by in map(_holder, bindings)}
            if len(roots) == 1 and None not in roots:
                return roots.pop()
            return None
        return "global"

    def _rebound_in(self, function: cst.FunctionDef, container: cst.BaseExpression,
                    before: Optional[cst.CSTNode] = None) -> bool:
        """``self.activations = []`` (or ``self.total = 0``) in the function itself: each call
        starts afresh, so nothing piles up across calls (unless only every N calls of a function
        that differentiates nothing: ``if self.steps % N == 0: self.totals = {}`` keeps N calls'
        values)."""
        spelled = _spelled_container(container)
        return spelled is not None and any(
            any(dotted_name(t.target) == spelled for t in assign.targets) and not self.reads(assign.value, spelled)
            and (self._accumulates_for_backward(container, function) or not self._every_n_steps(assign, function))
            and not self.scopes.gives_first_value(assign, spelled)  # (``if self.meters is None: self.meters = {...}``)
            for assign in self.scopes.scope_nodes(function, cst.Assign)
        )

    def _accumulates_for_backward(self, container: cst.BaseExpression, function: cst.FunctionDef) -> bool:
        """``function`` runs a backward, and what ``container`` holds is read into a loss a
        backward differentiates (gradient accumulation: a pending list differentiated and emptied
        every N steps), not a logger's totals emptied every N steps."""
        return self._differentiates(function) and self.differentiated_later(container)

    def _differentiates(self, function: cst.FunctionDef) -> bool:
        """A backward in ``function``'s own body (once per function: asked for each container)."""
        known = self._backward_in.get(function)
        if known is None:
            known = self._backward_in[function] = any(
                self.calls.backward_roots(c) for c in self.scopes.scope_nodes(function, cst.Call))
        return known

    # -- accumulations --------------------------------------------------------------------------
    @cached_property
    def _accumulations(self) -> list[Accumulation]:
        found = []
        for aug in self.tree.nodes(cst.AugAssign):
            if isinstance(aug.target, cst.Attribute) and aug.target.attr.value == "data":
                continue  # ``w.data -= lr * step``: written outside autograd, whatever ``step`` holds
            if isinstance(aug.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign)) and \
                    not isinstance(aug.value, cst.List):
                found.append(Accumulation(aug, aug.target, aug.value))
        for assign in self.tree.nodes(cst.Assign):
            if len(assign.targets) != 1 or not isinstance(assign.value, (cst.BinaryOperation, cst.IfExp, cst.Call)):
                continue
            target = assign.targets[0].target
            if isinstance(target, cst.Subscript):  # ``totals[m][k] = totals[m][k] + loss``
                value = assign.value
                if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                    added = value.right if value.left.deep_equals(target) else \
                        value.left if value.right.deep_equals(target) else None
                    if added is not None and not self._reads(added, target):
                        found.append(Accumulation(assign, target, added))
                continue
            spelled = dotted_name(target)
            if spelled is None:
                continue
            added = _added_to(assign.value, spelled)
            if added is not None and not self._reads(added, target):
                found.append(Accumulation(assign, target, added))
        return found

    def _reads(self, added: cst.BaseExpression, total: cst.BaseExpression) -> bool:
        """What is added reads the total's value: ``m = m + (x - m) / n`` is a running mean, a
        recurrence (TML005's), not a sum of what each step brings (``t + v.to(t.device)`` is)."""
        return any(node.deep_equals(total) and not (
            isinstance(parent := self.tree.parent.get(node), cst.Attribute) and parent.attr.value in METADATA_ATTRIBUTES)
            for node in self.tree.descendants(added, type(total)))

    def accumulations(self) -> list[Accumulation]:
        return self._accumulations

    def accumulation_at(self, node: cst.CSTNode) -> Optional[Accumulation]:
        """The accumulation ``node`` makes, if it is one."""
        return self._accumulation_by_node.get(node)

    @cached_property
    def _accumulation_by_node(self) -> dict[cst.CSTNode, Accumulation]:
        return {a.node: a for a in self._accumulations}

    # -- join accumulations ------------------------------------------------------------
    @cached_property
    def join_accumulations(self) -> list[JoinAccumulation]:
        found = []
        for assign in self.tree.nodes(cst.Assign):
            if len(assign.targets) != 1:
                continue
            target = assign.targets[0].target
            name = accumulator_name(target)
            if name is None:
                continue
            value, guard = assign.value, None
            if isinstance(value, cst.IfExp):  # x if acc is None else torch.cat([acc, x])
                guard = value
                value = value.orelse if isinstance(value.orelse, cst.Call) else value.body
            join = self._join_of(value, name)
            if join is not None:
                found.append(JoinAccumulation(assign, target, name, value, *join, guard))
        return found

    def _join_of(self, value: cst.BaseExpression, name: str) -> Optional[tuple[str, cst.BaseExpression, bool]]:
        if not isinstance(value, cst.Call) or not value.args:
            return None
        qualified = self.imports.qualify(value.func)
        if qualified not in JOIN_FUNCTIONS:
            return None
        pieces = value.args[0].value
        if not isinstance(pieces, (cst.List, cst.Tuple)) or len(pieces.elements) != 2:
            return None
        first, second = (e.value for e in pieces.elements)
        if accumulator_name(first) == name:
            return qualified, second, False
        if accumulator_name(second) == name:
            return qualified, first, True
        return None

    # -- does the container outlive the iteration? ------------------------------------------------
    def outlives(self, container: cst.BaseExpression, at: cst.CSTNode, iteration: Union[Loop, cst.FunctionDef],
                 _depth: int = 0) -> bool:
        """Whether ``container`` (used at ``at``) survives from one iteration to the next:
        bound before the loop (and not reset in it), an attribute, or a global; for a function
        run once per step, also a container its callers pass in that outlives their loop.
        Bounded containers (``deque(maxlen=...)``) never grow, so they do not count."""
        root = root_name(container)
        if root is None or self._is_bounded(container, at):
            return False
        is_attribute = not isinstance(container, cst.Name)
        if isinstance(iteration, cst.Lambda):  # a hook lambda binds nothing but its parameters
            if any(p.name.value == root for p in iteration.params.params) or self._emptied_between_calls(container):
                return False
            enclosing = self.scopes.function_of(iteration)
            if self._fresh_in_enclosing_step(iteration, root):
                return False
            if root != "self" and self.scopes.only_a_parameter(root, enclosing):
                return self._passed_in_outliving(enclosing, root, container, _depth)
            return True
        if isinstance(iteration, cst.FunctionDef) and iteration in self.calls.forward_hooks and \
                self._emptied_between_calls(container):
            return False
        if isinstance(iteration, cst.FunctionDef):  # once per step: locals die with the call
            if root == "self" and is_attribute and iteration in self.calls.forward_hooks and \
                    self._closed_over_object_made_per_step(iteration):
                return False
            if is_attribute and iteration in self.calls.forward_hooks and root == first_param(iteration):
                # ``module.activations.append(...)`` in a hook: the hooked module stays, unless the
                # hook keeps them only while grad is on, for a backward that consumes them (Opacus)
                return not any(self.imports.qualify(c.func) == "torch.is_grad_enabled"
                               for c in self.scopes.scope_nodes(iteration, cst.Call))
            if root == "self" and (is_attribute or first_param(iteration) == "self"):
                # (bare ``self``: the object a method of it keeps something on, ``self.store(metrics)``)
                # (``if self.steps % N == 0: self.totals = {}`` in ``push`` keeps N steps' values;
                # one after the backward that differentiates them is gradient accumulation)
                return not self._reset_in(container, iteration, every_step=not self._accumulates_for_backward(
                    container, iteration)) and \
                    not self.differentiated_and_emptied(container, iteration) and \
                    not self.reset_every_step_elsewhere_in_class(container, iteration)
            scope_bindings = self.scopes.bindings(iteration).get(root)
            if scope_bindings is None and root != "self" and self._fresh_in_enclosing_step(iteration, root):
                return False
            if root in self.scopes.global_names(iteration) or (scope_bindings is None and root != "self"):
                # (a hook's container: whether it is emptied often enough is answered above)
                return iteration in self.calls.forward_hooks or not self.differentiated_and_emptied(container, iteration)
            if root != "self" and self.scopes.only_a_parameter(root, iteration):
                return self._passed_in_outliving(iteration, root, container, _depth)
            holder = _entry_of(scope_bindings or [])
            if holder is not None and _depth < 3:  # ``state = self.state[p]``: an entry of what outlives
                return self.outlives(holder, at, iteration, _depth + 1)
            # ``total += loss`` on a parameter handed back: ``total = loop_body(x, total)``
            return not is_attribute and self.iterations.fed_back(iteration, root)
        if self._reset_in(container, iteration.body, every_step=True, first_values=False):
            return False
        func = self.scopes.function_of(iteration)
        if func is not None and root != "self" and self.scopes.is_per_step_method(func) and \
                root in self.scopes.bindings(func):
            return False  # a local of forward()/training_step() dies with the step
        if is_attribute and func is not None and self.differentiated_and_emptied(container, func):
            return False  # ``model.saved_log_probs`` filled over an episode, differentiated and emptied by the update
        if is_attribute and root == "self":
            return True
        if self._fresh_per_outer_step(container, iteration):
            return False
        # A name bound inside the loop body (or by the loop itself: ``for x, meta in loader``) is
        # a fresh object each iteration, unless the binding is the update itself (``total = total
        # + loss`` carries the old value over), or an inner loop over objects that outlive the
        # iteration (``for metric in metrics: metric.update(...)``).
        # A rebinding only every N steps (``if step % log_every == 0: running = 0``) keeps N steps'
        # values in between, as a periodic ``.clear()`` does (``_reset_in``).
        # A first value (``if total is None: total = loss``) starts the total, it does not empty it.
        inside = [b for b in self.scopes.bindings(self.scopes.scope_of(at)).get(root, [])
                  if (b.node is iteration or self.tree.contains(iteration.body, b.node)) and not b.augmented
                  and not self.reads(b.value, root) and not self._every_n_steps(b.node, iteration.body)
                  and not self.scopes.gives_first_value(b.node, root)]
        if inside and _depth < 3 and all(
                isinstance(b.node, cst.For) and b.node is not iteration and isinstance(b.node.target, cst.Name)
                and isinstance(b.node.iter, (cst.Name, cst.Attribute))
                and self.outlives(b.node.iter, b.node, iteration, _depth + 1) for b in inside):
            return True
        return not inside

    def _fresh_in_enclosing_step(self, function, root: str) -> bool:
        """A hook's closure over a container that the function around it makes anew on each of
        its calls, which run once per step (``feat_list = []`` in ``forward``, with the hook
        registered and removed there), or anew on each pass of the loop that registers the hook
        (``feats = []`` then ``register_forward_hook(lambda m, i, o: feats.append(o))`` per frame:
        a hook left registered fills the newest list, and piling hooks up is TML007's finding)."""
        loops = self.scopes.loops_around(function)
        if loops and self._rebound_each_pass(loops[0], root, function):
            return True
        enclosing = self.scopes.function_of(function)
        if enclosing is None or not self.iterations.runs_per_step(enclosing):
            return False
        if isinstance(function, cst.FunctionDef) and self.scopes.returns_name(enclosing, function.name.value):
            return False  # a factory's closure (``averager = EMA()``): its caller runs it step after step
        bindings = self.scopes.bindings(enclosing).get(root, [])
        return bool(bindings) and not any(isinstance(b.node, cst.Param) for b in bindings)

    def _rebound_each_pass(self, loop: Loop, root: str, before: cst.CSTNode) -> bool:
        """Every binding of ``root`` in the loop's scope is a fresh value made in the loop's body
        before ``before``."""
        bindings = self.scopes.bindings(self.scopes.scope_of(loop)).get(root, [])
        return bool(bindings) and all(
            self.tree.contains(loop.body, b.node) and not b.augmented and not self.reads(b.value, root)
            and self.tree.before(b.node, before) for b in bindings)

    def _closed_over_object_made_per_step(self, hook: cst.FunctionDef) -> bool:
        """A hook defined in a method, keeping what it sees on the method's ``self``
        (``self.maps[key].append(output)``), of a class whose every object the file builds anew
        in each step, into a local name (``tap = FeatureTap()`` in ``training_step``): what the
        hook keeps dies with that step's object (a hook never removed keeps it alive: TML007)."""
        method = self.scopes.function_of(hook)
        cls = self.scopes.class_of(method) if method is not None and first_param(hook) != "self" else None
        built = self.calls.constructions(cls) if cls is not None else []
        return bool(built) and all(self._made_into_a_local_per_step(call) for call in built)

    def object_dies_with_the_step_of_its_calls(self, method: cst.FunctionDef) -> bool:
        """``method``'s objects (of a plain class: not a module) are all made into a local name in
        the same step iteration as every call of it (``state = LoopState(x)`` in ``forward``, then
        ``state.step(block)`` per layer): what it rebinds on ``self`` dies with that step. (A meter
        made per epoch and updated per batch lives across those steps; a list it was handed at
        construction and appends to may be an outliving object's, so stores are not judged so.)"""
        cls = self.scopes.class_of(method)
        if cls is None or self.scopes.is_torch_module_class(cls):
            return False
        built, sites = self.calls.constructions(cls), self.calls.call_sites(method)
        if not built or not sites or not all(self._made_into_a_local_per_step(call) for call in built):
            return False
        made_in = {self.iterations.step_iteration(call) for call in built}
        return len(made_in) == 1 and all(self.iterations.step_iteration(site) in made_in for site in sites)

    def _made_into_a_local_per_step(self, call: cst.Call) -> bool:
        parent = self.tree.parent.get(call)
        while isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
            parent = self.tree.parent.get(parent)
        if not (isinstance(parent, cst.Assign) and all(_target_names_only(t.target) for t in parent.targets)):
            return False
        return self.iterations.step_iteration(call) is not None  # (a step loop, or a function run once per step)

    def _fresh_per_outer_step(self, container: cst.BaseExpression, loop: Loop) -> bool:
        """``stats = []`` in the body of an outer step loop, then ``for _ in range(ppo_epochs):
        stats.append(step(...))``, or ``for micro in minibatch:`` over the outer loop's own item
        (gradient accumulation): a bounded number of entries per outer step, made anew each time."""
        if not (isinstance(container, cst.Name) and isinstance(loop, cst.For)):
            return False
        outer = [o for o in self.scopes.loops_around(loop) if o is not loop]
        if not outer or not (_is_range(loop.iter) or self._iterates_item_of(loop, outer[0])):
            return False
        if _is_range(loop.iter) and any(_STEPS_OF_AN_EPOCH.search(name.value)
                                        for name in self.tree.descendants(loop.iter, cst.Name)):
            return False  # ``for step in range(args.steps_per_epoch)``: an epoch's steps, not a few repeats
        bindings = self.scopes.bindings(self.scopes.scope_of(loop)).get(container.value, [])
        return bool(bindings) and all(
            isinstance(b.value, (cst.List, cst.Dict)) and self.tree.contains(outer[0].body, b.node)
            and not self.tree.contains(loop, b.node) for b in bindings)

    def _iterates_item_of(self, loop: cst.For, outer: Loop) -> bool:
        """``for micro in minibatch`` inside ``for minibatch in ...``: parts of the outer item."""
        root = root_name(loop.iter)
        return isinstance(outer, cst.For) and root is not None and \
            any(name.value == root for name in self.tree.descendants(outer.target, cst.Name))

    def _passed_in_outliving(self, function: cst.FunctionDef, param: str, container: cst.BaseExpression,
                             depth: int) -> bool:
        """A container parameter of a function run once per step: some caller passes a container
        that outlives the caller's own iteration (``log(history, loss)`` in a loop over batches,
        ``history`` made before it)."""
        if depth >= MAX_CALLER_DEPTH:
            return False
        for site in self.calls.call_sites(function):
            callee = self.calls.callee(site)
            given = self.calls.arguments(site, callee).get(param, ()) if callee is not None else ()
            for argument, _ in given:
                iteration = self.iterations.step_iteration(site)
                if iteration is not None and self.outlives(argument, site, iteration, depth + 1):
                    return True
        return False

    def _emptied_between_calls(self, container: cst.BaseExpression) -> bool:
        """A container a hook fills that the file empties somewhere (``features.clear()`` after
        each forward, ``self.acts = []`` in a ``reset``), besides where it is first made."""
        spelled = _spelled_container(container)
        if spelled is None:
            return False
        # Emptied, or consumed (a backward hook pops what a forward hook pushed), here or, for
        # ``self.records``, through another object of the class (``monitor.records.pop(0)``).
        for method in ("clear", "pop", "popleft"):
            for call in self.calls.calls_spelled(method, method=True):
                if (dotted_name(call.func.value) == spelled or self._same_attribute_of_instance(call.func.value, container)) \
                        and not self._emptied_once_per_epoch(call):
                    return True
        for delete in self.tree.nodes(cst.Del):
            if any(isinstance(target, cst.Subscript) and dotted_name(target.value) == spelled for target in deleted(delete)):
                return True
        # (a rebinding once per epoch, after the inner loop of forward passes, as ``module.acts =
        # torch.cat(module.acts)`` after each layer's calibration pass, lets a whole pass pile up)
        # A method that makes it anew (``init_features``) empties it wherever else it is called: run
        # from ``__init__`` and again at the start of each ``forward``, it is made, then emptied.
        places = 0
        for assignment in self.scopes.assignments_to(spelled):
            if self._emptied_once_per_epoch(assignment):
                continue
            method = self.scopes.function_of(assignment)
            runs = self.calls.call_sites(method) if method is not None and method.name.value != "__init__" else ()
            places += max(1, len(runs))
        return places > 1

    def _emptied_once_per_epoch(self, emptying: cst.CSTNode, depth: int = 0) -> bool:
        """The emptying runs (itself, or through every call of the function holding it) in an
        outer loop after an inner loop of forward passes (``logger.summary()`` once per epoch):
        what a hook keeps on every batch piles up over the epoch."""
        if self.scopes.loops_around(emptying):
            return self._after_inner_step_loop(emptying)
        function = self.scopes.function_of(emptying)
        if function is not None and self._after_pass_over_data(function, emptying):
            return True
        places = self.calls.call_sites(function) if function is not None and depth < 3 else []
        return bool(places) and all(self._emptied_once_per_epoch(place, depth + 1) for place in places)

    def _after_pass_over_data(self, function: cst.FunctionDef, place: cst.CSTNode) -> bool:
        """``place`` follows, in ``function``, a loop or comprehension whose every pass runs the
        model, itself or through a function of the file (``losses = [self.eval_batch(b) for b in
        data]`` then ``self.features.clear()``): what a hook keeps piles up over the whole pass."""
        passes = (*self.scopes.scope_nodes(function, cst.For), *self.scopes.scope_nodes(function, cst.While),
                  *self.scopes.scope_nodes(function, cst.ListComp), *self.scopes.scope_nodes(function, cst.GeneratorExp))
        return any(self.tree.before(loop, place) and not self.tree.contains(loop, place) and any(
            self.calls.is_forward_pass(call) or self._runs_forward(call) for call in self.tree.descendants(loop, cst.Call))
            for loop in passes)

    def _runs_forward(self, call: cst.Call) -> bool:
        """``call`` runs a function of the file that runs the model."""
        callee = self.calls.callee(call)
        return callee is not None and isinstance(callee.function, cst.FunctionDef) and callee.constructs is None \
            and any(self.calls.is_forward_pass(c) for c in self.scopes.scope_nodes(callee.function, cst.Call))

    def _after_inner_step_loop(self, place: cst.CSTNode) -> bool:
        loops = self.scopes.loops_around(place)
        return any(
            not self.tree.contains(inner, place) and (
                any(self.calls.is_forward_pass(c) for c in self.tree.descendants(inner, cst.Call))
                or self.iterations.trains_through_calls(inner))
            for inner in self.tree.descendants(loops[0].body, cst.For) + self.tree.descendants(loops[0].body, cst.While))

    def _same_attribute_of_instance(self, other: cst.BaseExpression, container: cst.BaseExpression) -> bool:
        """``other`` is ``<an object of the class>.<attr>`` where ``container`` is ``self.<attr>`` in
        a method of that class."""
        if not (isinstance(other, cst.Attribute) and isinstance(container, cst.Attribute)
                and other.attr.value == container.attr.value and dotted_name(container.value) == "self"):
            return False
        method = self.scopes.function_of(container)
        cls = self.scopes.class_of(method) if method is not None else None
        # (built here, or a parameter named for the class: ``worker`` of ``RolloutWorker``)
        return cls is not None and (cls.name.value in self.scopes.classes_built_into(other.value, other)
                                    or self.calls.class_named_for(other.value, other) is cls)

    def _reset_in(self, container: cst.BaseExpression, region: cst.CSTNode,
                  after: Optional[cst.CSTNode] = None, every_step: bool = False, first_values: bool = True) -> bool:
        """Rebound (``c = []``), emptied (``c.clear()``, ``del c[:]``) or trimmed to a slice of
        itself (``c = c[batch_size:]`` after yielding a batch) inside ``region`` (and, given
        ``after``, after that node; with ``every_step``, one that runs on every step: not
        ``if step % log_freq == 0: ... c.clear()``, which keeps N steps' values, nor, without
        ``first_values``, a first value, ``if total is None: total = loss``); any other update that
        reads the old value (``self.total = self.total + loss``) is no reset."""
        spelled = dotted_name(container) if not isinstance(container, cst.Subscript) else None
        if spelled is None:
            spelled = dotted_name(container.value) if isinstance(container, cst.Subscript) else None
            if spelled is None:
                return False

        for node in self._resets_by_spelling(region).get(spelled, ()):
            if after is not None and not self.tree.before(after, node) or every_step and self._every_n_steps(node, region):
                continue
            if every_step and not first_values and self.scopes.gives_first_value(node, spelled):
                continue  # ``if total is None: total = loss``: the first value, not a reset each step
            if not isinstance(node, cst.Assign) or not self.reads(node.value, spelled) or _slice_of(node.value, spelled):
                return True
        return False

    def _resets_by_spelling(self, region: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
        """The assignments, ``.clear()`` calls and ``del c[...]`` of ``region`` by the name or
        attribute chain each may reset, in source order (once per region: asked per container)."""
        known = self._resets.get(region)
        if known is not None:
            return known
        known = self._resets[region] = {}
        for assign in self.tree.descendants(region, cst.Assign):
            for spelled in set().union(*(_assigned_spellings(t.target) for t in assign.targets)):
                known.setdefault(spelled, []).append(assign)
        for call in self.tree.descendants(region, cst.Call):
            func = call.func
            if not isinstance(func, cst.Attribute) or (spelled := dotted_name(func.value)) is None:
                continue
            if func.attr.value == "clear":
                for cleared in self._spellings_iterated_as(func.value, call) or (spelled,):
                    known.setdefault(cleared, []).append(call)
            method, attributes = self._own_attributes_reset_by(call)
            for attribute in attributes:
                known.setdefault(f"{spelled}.{attribute}", []).append(call)
            if attributes and not call.args and spelled != "self" and \
                    not set(attributes).isdisjoint(self._attributes_written_by_others(method)):
                # A method called with nothing to keep that resets what its class's other methods
                # write (``self.memory.reset()`` emptying what ``store(v)`` appends to) resets that
                # object, where a callee's store kept into it; not the caller's own ``self``, whose
                # other attributes it leaves alone, nor a method that restarts a timer of its own
                # (``loss_info.update_timer()`` rebinding ``self.t``) beside the kept loss.
                known.setdefault(spelled, []).append(call)
        for delete in self.tree.descendants(region, cst.Del):
            for target in deleted(delete):
                if isinstance(target, cst.Subscript) and (spelled := dotted_name(target.value)) is not None:
                    known.setdefault(spelled, []).append(delete)
        return known

    def _spellings_iterated_as(self, name: cst.BaseExpression, at: cst.CSTNode) -> tuple[str, ...]:
        """The containers a loop around ``at`` hands to ``name`` one by one, where it iterates over
        a literal of them (``for buf in (self.states, self.log_probs): buf.clear()``)."""
        if not isinstance(name, cst.Name):
            return ()
        for loop in self.scopes.loops_around(at):
            if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == name.value:
                if not isinstance(loop.iter, (cst.Tuple, cst.List)):
                    return ()
                return tuple(s for e in loop.iter.elements if (s := dotted_name(e.value)) is not None)
        return ()

    def _own_attributes_reset_by(self, call: cst.Call) -> tuple[Optional[cst.FunctionDef], list[str]]:
        """The method of this file a call on another object runs, and the attributes of its own
        object it resets: ``self.memory.clear()`` whose ``Memory.clear`` does
        ``self.actions, self.log_probs = [], []`` resets ``self.memory.actions``."""
        callee = self.calls.callee(call)
        method = callee.function if callee is not None and not callee.guessed else None
        if not isinstance(method, cst.FunctionDef) or self.scopes.class_of(method) is None or \
                method.name.value == "__init__" or method is self.scopes.function_of(call):
            return None, []
        owner = first_param(method)
        return method, [spelled[len(owner) + 1:] for spelled in self._resets_by_spelling(method)
                        if owner is not None and spelled.startswith(owner + ".")]

    def _attributes_written_by_others(self, method: cst.FunctionDef) -> set[str]:
        """The attributes of ``self`` that the other methods of ``method``'s class (not
        ``__init__``) assign, update or hand arguments to (``self.sum += x``,
        ``self.tracker.update(v)``): where what the object is given can be kept."""
        cls = self.scopes.class_of(method)
        by_method = self._written_attributes.get(cls)
        if by_method is None:
            by_method = self._written_attributes[cls] = {}
            for other in self.tree.descendants(cls, cst.FunctionDef):
                owner = first_param(other)
                if owner is None or other.name.value == "__init__" or self.scopes.class_of(other) is not cls:
                    continue
                written = by_method.setdefault(other, set())
                targets = [t.target for a in self.scopes.scope_nodes(other, cst.Assign) for t in a.targets]
                targets += [a.target for node_type in (cst.AugAssign, cst.AnnAssign)
                            for a in self.scopes.scope_nodes(other, node_type)]
                targets += [c.func.value for c in self.scopes.scope_nodes(other, cst.Call)
                            if c.args and isinstance(c.func, cst.Attribute)]
                for target in targets:
                    while isinstance(target, cst.Subscript):  # ``self.bins[k] = v``
                        target = target.value
                    for spelled in _assigned_spellings(target):
                        if spelled.startswith(owner + "."):
                            written.add(spelled[len(owner) + 1:].split(".")[0])
        return set().union(*(attributes for other, attributes in by_method.items() if other is not method))

    def _every_n_steps(self, node: cst.CSTNode, region: cst.CSTNode) -> bool:
        """``node`` runs under an ``if`` of ``region`` that tests a step count modulo something
        (``if step % log_interval == 0:``): once every N iterations."""
        for ancestor in self.tree.ancestors(node):
            if ancestor is region:
                return False
            if type(ancestor) is cst.If and tests_every_n_steps(ancestor.test, self.tree):
                return True
        return False

    def reads(self, expr: Optional[cst.BaseExpression], spelled: str) -> bool:
        """Whether ``expr`` reads the name or attribute chain ``spelled`` (``a`` or ``self.a``)."""
        return expr is not None and bool(self.spelled_in(expr, spelled))

    def spelled_in(self, region: cst.CSTNode, spelled: str) -> list[cst.BaseExpression]:
        """The names or attribute chains in ``region`` spelled ``spelled``."""
        node_type = cst.Name if "." not in spelled else cst.Attribute
        return [n for n in self.tree.descendants(region, node_type) if dotted_name(n) == spelled]

    def _is_bounded(self, container: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
        """``deque(maxlen=...)``, bound to the name, or to the ``self`` attribute everywhere the
        class assigns it (``self.recent = deque(maxlen=100)`` in ``__init__``), also when it is
        handed in by the callers (``LoopState(recent)``, ``train(recent)``)."""
        if depth > 2:
            return False
        if isinstance(container, cst.Name):
            bindings = self.scopes.reaching_bindings(container.value, at)
            return any(self._bounded_factory(b.value) for b in bindings) or \
                any(isinstance(b.node, cst.Param) and self._passed_bounded(b.node, depth) for b in bindings)
        if isinstance(container, cst.Attribute) and dotted_name(container.value) == "self":
            method = self.scopes.function_of(at)
            cls = self.scopes.self_class(method)
            assigned = self.flow.self_assignments(cls).get(container.attr.value, []) if cls is not None else []
            return bool(assigned) and all(
                self._bounded_factory(a.value) or isinstance(a.value, cst.Name) and self._is_bounded(a.value, a.node, depth + 1)
                for a in assigned)
        return False

    def _passed_bounded(self, param: cst.Param, depth: int) -> bool:
        """Every call of the parameter's function (or class, for ``__init__``) passes a bounded container."""
        passed = self.calls.passed_to(param)
        return bool(passed) and all(self._is_bounded(expr, where, depth + 1) for expr, where in passed)

    def _bounded_factory(self, value: Optional[cst.BaseExpression]) -> bool:
        if not isinstance(value, cst.Call):
            return False
        name = self.imports.qualify(value.func) or dotted_name(value.func)
        return name in _BOUNDED_FACTORIES and any(a.keyword and a.keyword.value == "maxlen" for a in value.args)

    def never_grows(self, store: Store) -> bool:
        """A store that cannot add an element: a fixed key (``last["loss"] = v``), or an index
        into a list (``self.cached[slot] = y`` replaces an element; a list never grows by
        item assignment)."""
        if store.overwrites_fixed_slot:
            return True
        if isinstance(store.node, cst.Assign) and TENSOR in (self.flow.value(store.container, store.node).kind,
                                                             self.flow.kind_handed_in(store.container, store.node)):
            return True  # a slice of a tensor is overwritten; whether that links graphs is an in-place write's
        if isinstance(store.node, cst.Assign) and self.scopes.function_of(store.node) in self.calls.forward_hooks:
            return True  # ``outputs[names[module]] = out`` in a hook: one slot per hooked module, overwritten
        if self._only_on_first_iteration(store.node):
            return True
        assign = store.node if isinstance(store.node, cst.Assign) else store.inside  # (in a callee: ``ema.apply(loss)``)
        if isinstance(assign, cst.Assign) and any(
                isinstance(t.target, cst.Subscript) and self.reads_own_slot(assign, t.target) for t in assign.targets):
            return True  # ``ema[k] = d * ema[k] + ...``: the item exists already (TML005's if it keeps a graph)
        if isinstance(assign, cst.Assign) and any(
                isinstance(t.target, cst.Subscript) and len(t.target.slice) > 1 and
                any(isinstance(e.slice, cst.Slice) for e in t.target.slice) for t in assign.targets):
            return True  # ``self.queue[ptr:ptr + n, :] = keys``: rows of a preallocated tensor overwritten
        if self._writes_into_an_array(store):
            return True
        if store.key is None:
            return False
        if self._closure_constant(store.key, store.node) or self._bounded_key(store.key, store.node) or \
                self._rewrites_iterated_key(store):
            return True
        if dotted_name(store.container) is None:
            return False
        values = self._container_values(store)
        return bool(values) and all(_is_list(v) for v in values)

    def capped(self, store: Store) -> bool:
        """An append made only below a capacity: ``if len(self.items) < self.size:`` or ``if
        self.count < self.size: self.count += 1; self.items.append(x)`` (an image pool, a reservoir),
        or at one length only (``if len(buffer) == 1:``, ``if not buffer:``, a slot filled once):
        the container stops growing (what each element keeps is another question)."""
        append = store.inside or store.node
        grown = append.func.value if isinstance(append, cst.Call) and isinstance(append.func, cst.Attribute) else None
        if grown is not None and self._evicted_first(append, grown):
            return True
        branch = next((a for a in self.tree.ancestors(append) if isinstance(a, (cst.If, cst.FunctionDef))), None)
        if not isinstance(branch, cst.If) or not self.tree.contains(branch.body, append):
            return False
        test = branch.test
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return grown is not None and dotted_name(test.expression) == dotted_name(grown) is not None
        counted = _compared(test, (cst.LessThan, cst.LessThanEqual, cst.Equal))
        if counted is None:
            return False
        measured = _length_of(counted)
        if measured is not None:
            return grown is not None and dotted_name(measured) == dotted_name(grown) is not None
        spelled = dotted_name(counted)
        return spelled is not None and any(
            dotted_name(a.target) == spelled and isinstance(a.operator, cst.AddAssign)
            for a in self.tree.descendants(branch.body, cst.AugAssign))

    def _evicted_first(self, append: cst.Call, grown: cst.BaseExpression) -> bool:
        """A ring buffer: one of the statements just before the append drops the oldest element
        once the container is full (``if len(q) == size: q.popleft()``), so it never grows
        past its size."""
        statement = self.tree.statement_of(append)
        block = self.tree.parent.get(statement)
        positions = self._statement_positions.get(block)
        if positions is None:  # (once per block: a loop may append to thousands of containers)
            positions = self._statement_positions[block] = {s: i for i, s in enumerate(getattr(block, "body", ()))}
        index = positions.get(statement)
        if index is None:
            return False
        spelled = dotted_name(grown)
        for earlier in block.body[max(0, index - 3):index]:
            counted = _compared(earlier.test, (cst.Equal, cst.GreaterThanEqual, cst.GreaterThan)) \
                if isinstance(earlier, cst.If) else None
            measured = _length_of(counted) if counted is not None else None
            if measured is not None and dotted_name(measured) == spelled and any(
                    isinstance(c.func, cst.Attribute) and c.func.attr.value in ("popleft", "pop")
                    and dotted_name(c.func.value) == spelled for c in self.tree.descendants(earlier.body, cst.Call)):
                return True
        return False

    def _writes_into_an_array(self, store: Store) -> bool:
        """``logps[t] = log_prob`` into a NumPy array the file made (``np.zeros(size)``): the slot
        takes a copy of the number, neither the tensor nor its graph."""
        if store.key is None or dotted_name(store.container) is None:
            return False
        values = self._container_values(store)
        return bool(values) and all(isinstance(v, cst.Call) and (self.imports.qualify(v.func) or "").startswith("numpy.")
                                    for v in values)

    def _container_values(self, store: Store) -> list[Optional[cst.BaseExpression]]:
        """What the file binds the store's container to (a name's reaching bindings; an attribute's
        assignments anywhere, spelled the same)."""
        if isinstance(store.container, cst.Name):
            return [b.value for b in self.scopes.reaching_bindings(store.container.value, store.node)]
        spelled = dotted_name(store.container)
        return self.scopes.values_assigned_to(spelled)

    def writes_position(self, store: Store) -> bool:
        """``rollouts.rewards[step] = r`` for ``step in range(n)``: a slot of a preallocated buffer
        (a list or a tensor never grows by item assignment; only a dict made in this file would).
        The buffer does not grow, though it keeps up to ``n`` values: whether those hold graphs is
        TML001's question, not this one's."""
        if store.key is None or not self._range_index(store.key, store.node):
            return False
        return not any(_is_mapping(v) for v in self._container_values(store))

    def _range_index(self, key: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """The key is the target of a ``for`` over ``range(...)``: an integer position."""
        key = _key_expression(key)
        if not isinstance(key, cst.Name):
            return False
        bindings = self.scopes.reaching_bindings(key.value, at)
        return bool(bindings) and all(
            _is_range(b.node.iter) if isinstance(b.node, cst.For) and isinstance(b.node.target, cst.Name)
            else self._next_of_range(b.value, b.node) for b in bindings)

    def _next_of_range(self, value: Optional[cst.BaseExpression], at: cst.CSTNode) -> bool:
        """``next(positions)`` where ``positions = iter(range(n))``."""
        if not (isinstance(value, cst.Call) and dotted_name(value.func) == "next" and value.args
                and isinstance(value.args[0].value, cst.Name)):
            return False
        made = self.scopes.reaching_bindings(value.args[0].value.value, at)
        return bool(made) and all(
            isinstance(b.value, cst.Call) and dotted_name(b.value.func) == "iter" and len(b.value.args) == 1
            and _is_range(b.value.args[0].value) for b in made)

    def keyed_by_example(self, store: Store, iteration: Iteration) -> bool:
        """``results[i] = out`` where the key comes from the data of the step (the step loop's
        target, or an inner loop over it: ``for i, o in zip(ids, out)``): a new key, so a new
        entry, on every iteration. A key from a fixed set (``for name, v in losses.items()``)
        is not."""
        if store.key is None:
            return False
        if isinstance(iteration, cst.FunctionDef):  # ``trained[trial.number] = model`` in an objective
            params = {p.name.value for p in (*iteration.params.posonly_params, *iteration.params.params)}
            return bool(self._names_in(store.key) & params) and \
                bool(_PER_CALL_KEY.search(cst.Module([]).code_for_node(store.key)))
        if isinstance(iteration, cst.For):
            per_step = self._names_in(iteration.target)
        elif isinstance(iteration, cst.While):
            per_step = self._advanced_in(iteration)
        else:
            return False
        keys = self._names_in(store.key)
        if not keys or self._filled_up_front(store):
            return False
        comprehension = self.tree.parent.get(store.key)
        if isinstance(comprehension, cst.DictComp) and comprehension.key is store.key:
            # (``d.update({i: o for i, o in zip(ids, out)})``: keys from the step's data, as an inner loop's)
            for_in: Optional[cst.CompFor] = comprehension.for_in
            while for_in is not None:
                if keys & self._names_in(for_in.target):
                    reads = self._names_in(for_in.iter)
                    if reads & per_step or any(self._bound_from(name, per_step, iteration) for name in reads):
                        per_step = per_step | self._names_in(for_in.target)
                for_in = for_in.inner_for_in
        for loop in self.scopes.loops_around(store.node):
            if loop is iteration:
                break
            if isinstance(loop, cst.For) and keys & self._names_in(loop.target):
                reads = self._names_in(loop.iter)
                if reads & per_step or any(self._bound_from(name, per_step, iteration) for name in reads):
                    per_step = per_step | self._names_in(loop.target)
        return bool(keys & per_step) and not self._read_at_step_key(store, iteration, keys & per_step)

    def _filled_up_front(self, store: Store) -> bool:
        """``self.control = {i: torch.zeros(n) for i in range(clients)}``: a table made with every
        key at once, so an item write replaces an entry (one per client) rather than adding one."""
        if dotted_name(store.container) is None:
            return False
        values = self._container_values(store)
        return bool(values) and all(isinstance(v, cst.DictComp) for v in values)

    def _read_at_step_key(self, store: Store, iteration: Loop, step_keys: set[str]) -> bool:
        """``memory = memories[inds]`` earlier in the step, then ``memories[inds + i + 1] = ...``:
        a buffer read at the step's own positions already has them (a missing key would have
        raised), so the write replaces (not for a mapping this file makes: a ``defaultdict``
        answers any read)."""
        spelled = dotted_name(store.container)
        if spelled is None or any(_is_mapping(v) for v in self._container_values(store)):
            return False
        return any(
            dotted_name(read.value) == spelled and self.tree.before(read, store.node) and
            not isinstance(self.tree.parent.get(read), cst.AssignTarget) and
            bool(self._names_in(read.slice[0]) & step_keys)
            for read in self.tree.descendants(iteration.body, cst.Subscript))

    def _advanced_in(self, loop: cst.While) -> set[str]:
        """The names a ``while`` loop moves on each iteration: ``batch = next(it)``, ``i += 1``."""
        advanced = set()
        for name, bindings in self.scopes.bindings(self.scopes.scope_of(loop)).items():
            if any(self.tree.contains(loop.body, b.node) and (b.augmented or isinstance(b.value, cst.Call) and
                                                               dotted_name(b.value.func) == "next")
                   for b in bindings):
                advanced.add(name)
        return advanced

    def _bound_from(self, name: str, per_step: set[str], iteration: Loop) -> bool:
        """``name`` is assigned in the step loop from the step's data (``out = model(x)``)."""
        return any(
            self.tree.contains(iteration.body, b.node) and b.value is not None and
            self._names_in(b.value) & per_step
            for b in self.scopes.bindings(self.scopes.scope_of(iteration)).get(name, [])
        )

    def _names_in(self, node: cst.CSTNode) -> set[str]:
        names = {n.value for n in self.tree.descendants(node, cst.Name)}
        if isinstance(node, cst.Name):
            names.add(node.value)
        return names

    def own_slot_reads(self, assign: cst.Assign, slot: cst.Subscript) -> list[tuple[cst.Subscript, cst.BaseExpression]]:
        """``ema[k] = d * ema[k] + ...``: where the value reads the item it replaces, spelled the same,
        with the expression holding the read: the assigned value, or the value of the one assignment
        that binds a name it reads (``new = d * ema[k] + ...``; ``ema[k] = new.clone()``), three
        such steps back at most (``previous = memory[node]``; ``updated = gru(message, previous)``;
        ``memory[node] = updated.squeeze(0)``)."""
        speller = cst.Module([])  # (made here: naming LibCST at import time would load it with this module)
        spelled = speller.code_for_node(slot)
        values, frontier = [assign.value], [(assign.value, assign)]
        for _ in range(3):
            reached = []
            for value, at in frontier:
                for name in self.tree.descendants(value, cst.Name):
                    if name.value == "self" or self.tree.is_attribute_name(name):
                        continue  # (``self``, and ``clone`` of ``new.clone()``: no variable)
                    bindings = self.scopes.reaching_bindings(name.value, at)
                    if len(bindings) == 1 and isinstance(bindings[0].node, cst.Assign) and \
                            bindings[0].value is not None and bindings[0].value not in values:
                        values.append(bindings[0].value)
                        reached.append((bindings[0].value, bindings[0].node))
            frontier = reached
        return [(n, value) for value in values for n in self.tree.descendants(value, cst.Subscript)
                if speller.code_for_node(n) == spelled]

    def reads_own_slot(self, assign: cst.Assign, slot: cst.Subscript) -> bool:
        return bool(self.own_slot_reads(assign, slot))

    def _only_on_first_iteration(self, node: cst.CSTNode) -> bool:
        """Under ``if step == 0:`` for the target of a loop around it (static buffers filled on
        the first step, then updated in place with ``copy_``): one iteration's worth of entries."""
        for branch in self.tree.ancestors(node):
            if isinstance(branch, (cst.FunctionDef, cst.For, cst.While)):
                return False
            if not (isinstance(branch, cst.If) and self.tree.contains(branch.body, node)):
                continue
            test = branch.test
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
                    isinstance(test.comparisons[0].operator, cst.Equal) and \
                    isinstance(test.comparisons[0].comparator, cst.Integer) and \
                    test.comparisons[0].comparator.value == "0" and isinstance(test.left, cst.Name):
                return any(isinstance(loop, cst.For) and test.left.value in self._names_in(loop.target)
                           for loop in self.scopes.loops_around(node))
        return False

    def _rewrites_iterated_key(self, store: Store) -> bool:
        """``for name, module in components.items(): components[name] = module.half()``: the key
        is one the loop reads from the same container, so the item exists already."""
        key = _key_expression(store.key)
        spelled = dotted_name(store.container)
        if not isinstance(key, cst.Name) or spelled is None:
            return False
        for loop in self.scopes.loops_around(store.node):
            if not isinstance(loop, cst.For):
                continue
            iterable = loop.iter
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
                    iterable.func.attr.value in ("items", "keys") and not iterable.args:
                iterable = iterable.func.value
            target = loop.target
            first = target.elements[0].value if isinstance(target, cst.Tuple) and target.elements else target
            if dotted_name(iterable) == spelled and isinstance(first, cst.Name) and first.value == key.value:
                return True
        return False

    def _closure_constant(self, key: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """A key made only of names the enclosing *function* binds (``activation[name] = out``
        in a hook that ``get_activation(name)`` returns): the same slot on every call."""
        function = self.scopes.function_of(at)
        outer = self.scopes.function_of(function) if function is not None else None
        if outer is None:
            return False
        names = [n.value for n in self.tree.descendants(key, cst.Name)] if not isinstance(key, cst.Name) else [key.value]
        own = self.scopes.bindings(function)
        return bool(names) and all(n not in own and n in self.scopes.bindings(outer) for n in names)

    def _bounded_key(self, key: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> bool:
        """A key from a small fixed set: made from a device (``cache[str(x.device)] = bias``: one
        entry per device the process uses), or taken modulo (``buffer[step % n] = inputs``: a ring
        of ``n`` slots)."""
        key = _key_expression(key)
        if isinstance(key, cst.Name):
            bindings = self.scopes.reaching_bindings(key.value, at)
            return depth < 4 and bool(bindings) and all(
                b.value is not None and self._bounded_key(b.value, b.node, depth + 1) for b in bindings)
        if isinstance(key, cst.BinaryOperation) and isinstance(key.operator, cst.Modulo):
            return True
        while isinstance(key, cst.Call) and len(key.args) == 1 and dotted_name(key.func) in ("str", "repr"):
            key = key.args[0].value
        spelled = dotted_name(key)
        return spelled is not None and spelled.split(".")[-1] == "device"

    def differentiated_and_emptied(self, container: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """A ``self`` container that another method empties after running a backward (a
        REINFORCE agent's ``learn``): graphs kept to be differentiated, not piling up. Emptied
        without a backward (at the end of an epoch) they still pile up until then."""
        cls = self.scopes.self_class(method)
        spelled = _spelled_container(container) or ""
        if cls is None and spelled.startswith("self."):
            return False
        owner = cls if spelled.startswith("self.") else self.tree.module  # (a global's: any function)
        return any(
            self._reset_in(container, other, after=backward) and not self._read_only_detached(spelled, other)
            for other, backward in self._differentiating_functions
            if other is not method and other.name.value != "__init__" and self.tree.contains(owner, other)
        )

    def differentiated_later(self, container: cst.BaseExpression) -> bool:
        """Some function of the file differentiates what ``container`` holds: its spelling is read
        into the loss a backward differentiates (``loss = -(torch.stack(policy.log_probs) *
        returns).sum(); loss.backward()``), so its elements must keep their graphs."""
        spelled = _spelled_container(container)
        if spelled is None or "." not in spelled:
            return False  # (an attribute only: a bare name may be another function's local, ``self`` any attribute)
        known = self._differentiated_spellings.get(spelled)
        if known is None:
            known = self._differentiated_spellings[spelled] = any(
                not self._detached_here(read) for value in self._read_into_losses for read in self.spelled_in(value, spelled))
        return known

    @cached_property
    def _read_into_losses(self) -> list[cst.BaseExpression]:
        """What the file's backward passes differentiate: the values assigned to names that feed
        a backward, and the roots of each backward (``torch.stack(self.pending).mean().backward()``)."""
        found = []
        for function, _ in self._differentiating_functions:
            feeding = self.calls.names_feeding_backward(function)
            found += [assign.value for assign in self.scopes.scope_nodes(function, cst.Assign)
                      if any(isinstance(t.target, cst.Name) and t.target.value in feeding for t in assign.targets)]
            found += [root for call in self.scopes.scope_nodes(function, cst.Call) for root in self.calls.backward_roots(call)]
        return found

    def returned_only_detached(self, function: cst.FunctionDef, name: str) -> bool:
        """Every caller of ``function`` in the file takes the container ``name`` it returns
        (alone, or at its place in a returned tuple) into a name it reads only ``.detach()``ed
        (``old_log_probs = torch.stack(log_probs).detach()`` after ``..., log_probs, ... =
        self.collect_rollouts()``): the graphs it holds are kept for no backward."""
        positions = set()  # (index in the returned tuple, or None for the name itself; its width)
        for ret in self.scopes.scope_nodes(function, cst.Return):
            if isinstance(ret.value, cst.Tuple):
                elements = ret.value.elements
                positions.add((next((i for i, e in enumerate(elements)
                                     if isinstance(e.value, cst.Name) and e.value.value == name), -1), len(elements)))
            elif ret.value is not None:
                positions.add((None if isinstance(ret.value, cst.Name) and ret.value.value == name else -1, 1))
        sites = self.calls.call_sites(function)
        if len(positions) != 1 or not sites:
            return False
        index, width = positions.pop()
        if index == -1:
            return False
        for site in sites:
            target, caller = self.calls.result_target(site, index, width), self.scopes.function_of(site)
            if not isinstance(target, cst.Name) or caller is None:
                return False
            bound = [t.target for assign in self.scopes.scope_nodes(caller, cst.Assign) for t in assign.targets]
            reads = [n for n in self.spelled_in(caller, target.value) if not any(self.tree.contains(t, n) for t in bound)]
            if not reads or not all(self._detached_here(read) for read in reads):
                return False
        return True

    def _read_only_detached(self, spelled: str, function: cst.FunctionDef) -> bool:
        """``function`` reads the container only into ``.detach()``ed values (PPO's
        ``old_log_probs = torch.stack(self.memory.log_probs).detach()``): its backward runs
        through graphs it makes anew, not through the ones kept."""
        reads = [n for n in self.spelled_in(function, spelled)
                 if not isinstance(self.tree.parent.get(n), (cst.AssignTarget, cst.Attribute))]
        return bool(reads) and all(self._detached_here(read) for read in reads)

    def _detached_here(self, read: cst.CSTNode) -> bool:
        """``read`` sits, within its expression, in the receiver of a ``.detach()`` call."""
        child, parent = read, self.tree.parent.get(read)
        while isinstance(parent, (cst.BaseExpression, cst.Arg, cst.BaseElement)):
            if isinstance(parent, cst.Attribute) and parent.value is child and parent.attr.value == "detach":
                return True
            child, parent = parent, self.tree.parent.get(parent)
        return False

    @cached_property
    def _differentiating_functions(self) -> list[tuple[cst.FunctionDef, cst.Call]]:
        """The functions of the file that run a backward pass themselves, each with its first
        backward call (found once)."""
        found = []
        for function in self.tree.nodes(cst.FunctionDef):
            backward = next((c for c in self.tree.descendants(function, cst.Call) if self.calls.backward_roots(c)), None)
            if backward is not None:
                found.append((function, backward))
        return found

    def reset_every_step_elsewhere_in_class(self, container: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """A ``self`` container that another method of the class, itself run once per step, empties
        or rebinds (a decoder's ``initialize_decoder_states`` at the start of each ``forward``,
        before ``decode`` adds to the attribute per time step): then it lives for one step."""
        return any(self._runs_every_step(other) and not self._loops_over(other, method)
                   for other in self.methods_resetting(container, method))

    def methods_resetting(self, container: cst.BaseExpression, method: cst.FunctionDef) -> list[cst.FunctionDef]:
        """The other methods of ``method``'s class (not ``__init__``) that empty or rebind the
        ``self`` container."""
        cls = self.scopes.self_class(method)
        spelled = _spelled_container(container)
        if cls is None or spelled is None:
            return []
        return [other for other in self._methods_resetting(cls).get(spelled, ())
                if other is not method and self._reset_in(container, other)]

    def emptied_between_calls_of(self, container: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """A ``self`` container that ``method`` fills in a loop of its own (a rollout) and another
        method of the class empties, called in the same loop as ``method`` (``worker.collect()``,
        the update, then ``worker.clear()``), on every pass of it (not ``if update % 100 == 0:``):
        it holds one call's values, not the run's."""
        filling = {loops[0] for site in self.calls.call_sites(method) if (loops := self.scopes.loops_around(site))}
        if not filling:
            return False
        emptying = [site for other in self.methods_resetting(container, method) for site in self.calls.call_sites(other)]
        # (or emptied through the object itself: ``worker.old_log_probs.clear()`` in the caller's loop)
        emptying += [call for call in self.calls.calls_spelled("clear", method=True)
                     if self._same_attribute_of_instance(call.func.value, container)]
        return any((loops := self.scopes.loops_around(site)) and loops[0] in filling
                   and not self._every_n_steps(site, loops[0]) for site in emptying)

    def _reset_in_each_step_loop(self, container: cst.BaseExpression, method: cst.FunctionDef) -> bool:
        """A ``self`` container that another method of the class empties or rebinds, called on
        every pass of a loop whose own body runs the step (a backward or an optimizer step), not
        of an epoch loop around it: a regularizer's running term that ``pop_term()`` hands to each
        step's loss and resets holds one step's graph."""
        for other in self.methods_resetting(container, method):
            spelled = [call for call in self.calls.calls_spelled(other.name.value, method=True)
                       if self._on_an_attribute_holding_its_class(call, other)]
            for site in {*self.calls.call_sites(other), *spelled}:
                loops = self.scopes.loops_around(site)
                if loops and not self._every_n_steps(site, loops[0]) and any(
                        is_step_call(call) and self.scopes.loops_around(call)[0] is loops[0]
                        for call in self.scopes.loop_body_nodes(loops[0], cst.Call)):
                    return True
        return False

    def _on_an_attribute_holding_its_class(self, call: cst.Call, method: cst.FunctionDef) -> bool:
        """``model.regularizer.pop_term()`` on a model handed in, where a class of the file sets
        ``self.regularizer = LpRegularizer(...)``, ``method``'s class: a call of ``method``."""
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        cls = self.scopes.class_of(method)
        return isinstance(receiver, cst.Attribute) and cls is not None and any(
            self.flow.class_attribute(owner, receiver.attr.value).cls == cls.name.value
            for owner in self.scopes.classes_by_name.values())

    def _loops_over(self, outer: cst.FunctionDef, method: cst.FunctionDef) -> bool:
        """``outer`` calls ``method`` in a loop of its own (an epoch's ``train_round`` around the
        per-batch ``forward_backward``): it runs once around many of its calls, not once per call."""
        return any(self.scopes.function_of(site) is outer and self.scopes.loops_around(site)
                   for site in self.calls.call_sites(method))

    def _runs_every_step(self, method: cst.FunctionDef) -> bool:
        """Run once per step, and not only every N steps (``if step % learn_freq == 0:
        agent.learn()`` keeps N steps' values in between)."""
        return self.iterations.runs_per_step(method) and not any(
            self._every_n_steps(site, self.scopes.scope_of(site)) for site in self.calls.call_sites(method))

    def _methods_resetting(self, cls: cst.ClassDef) -> dict[str, list[cst.FunctionDef]]:
        """The methods of ``cls`` (not ``__init__``) that may reset each name or attribute chain
        (``_resets_by_spelling``), once per class: asked for every container kept on ``self``."""
        known = self._class_resets.get(cls)
        if known is None:
            known = self._class_resets[cls] = {}
            for other in self.tree.descendants(cls, cst.FunctionDef):
                if other.name.value != "__init__":
                    for spelled in self._resets_by_spelling(other):
                        known.setdefault(spelled, []).append(other)
        return known


# A key that names one call of a per-step function (a trial, an epoch, a step), not one of a few slots.
_PER_CALL_KEY = re.compile(r"number|\bid\b|_id\b|idx|index|step|epoch|fold|trial|iteration", re.IGNORECASE)


def _compared(test: cst.BaseExpression, operators: tuple[type, ...]) -> Optional[cst.BaseExpression]:
    """The left side of ``test`` when it is one comparison by one of ``operators``."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, operators):
        return test.left
    return None


def _length_of(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``x`` of ``len(x)``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len" and \
            len(expr.args) == 1:
        return expr.args[0].value
    return None


def _on_host(value, param: str) -> bool:
    """What ``value`` holds of ``param`` is on the host: the value itself (``z.cpu()``), or every
    part of a tuple or dict that holds it (``(label.item(), audio.cpu())``), or every element of
    a sequence (``(rows[i] for i in ...)`` of ``rows = z.cpu()``)."""
    if value.host:
        return True
    parts = [*(value.elements or ()), *(v for _, v in value.fields or ()), *((value.element,) if value.element else ())]
    return bool(parts) and all(part.host or param not in (part.params | part.device_params) for part in parts)


def _packs(expr: cst.BaseExpression, param: str) -> bool:
    """``expr`` writes out a tuple, list or dict one of whose parts is ``param`` itself
    (``(log_prob, value)``): what is kept of it is the argument, computed by nothing."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        parts = [e.value for e in expr.elements]
    elif isinstance(expr, cst.Dict):
        parts = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
    else:
        return False
    return any(isinstance(part, cst.Name) and part.value == param for part in parts)


def _holder(binding) -> Optional[cst.BaseExpression]:
    """The container the binding takes its object from: the iterable of ``for meter in
    self.meters.values()`` (the dict itself), else the value bound."""
    held_by = binding.node.iter if isinstance(binding.node, cst.For) else binding.value
    if isinstance(binding.node, cst.For) and isinstance(held_by, cst.Call) and \
            isinstance(held_by.func, cst.Attribute) and held_by.func.attr.value in ("values", "items"):
        held_by = held_by.func.value
    return held_by


def _entry_of(bindings) -> Optional[cst.BaseExpression]:
    """The container a local names an entry of, when every binding of it reads one entry of the
    same container: ``state = self.state[p]``, ``buf = self.buffers.setdefault(name, {})``."""
    holders = set()
    for binding in bindings:
        value = binding.value
        if isinstance(binding.node, cst.For):
            holder = _element_source(binding.node.iter, binding.index)
            if holder is None:
                return None
            holders.add(holder)
            continue
        if binding.index is not None or binding.augmented or value is None:
            return None
        if isinstance(value, cst.Subscript):
            holder = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                value.func.attr.value in ITEM_GETTERS and value.args:
            holder = value.func.value
        else:
            return None
        holders.add(holder)
    spelled = {dotted_name(h) for h in holders}
    return next(iter(holders)) if len(spelled) == 1 and None not in spelled else None


def _element_source(iterable: cst.BaseExpression, index: Optional[int]) -> Optional[cst.BaseExpression]:
    """The object list a loop's variable takes its elements from, where it is an attribute of
    ``self`` (``for loss_func in self.loss_functions``, ``zip(self.loss_functions, outputs)`` at
    the variable's position): the objects stay on ``self`` after the loop. Not a loader's, whose
    batches are new each time."""
    if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "zip" and index is not None and \
            index < len(iterable.args):
        iterable, index = iterable.args[index].value, None
    if index is not None or not isinstance(iterable, cst.Attribute) or dotted_name(iterable.value) != "self" or \
            LOADER_ITERABLE.search(iterable.attr.value):
        return None
    return iterable


def _added_to(value: cst.BaseExpression, spelled: str) -> Optional[cst.BaseExpression]:
    """What ``value`` adds to the total ``spelled``: ``v`` of ``t + v`` (``v + t``, ``t * v``),
    of ``v if t is None else t + v`` (the first step sets the total, the later ones add), and of
    ``tuple(map(sum, zip(t, v)))`` (a tuple of totals, one per component)."""
    if isinstance(value, cst.IfExp):
        # (tested on the total itself: ``t is None``, ``t is not None``)
        if not isinstance(value.test, cst.Comparison) or dotted_name(value.test.left) != spelled:
            return None
        for branch in (value.orelse, value.body):
            added = _added_to(branch, spelled)
            if added is not None:
                return added
        return None
    if isinstance(value, cst.BinaryOperation):
        if dotted_name(value.left) == spelled:
            return value.right
        if dotted_name(value.right) == spelled and isinstance(value.operator, (cst.Add, cst.Multiply)):
            return value.left
        return None
    if isinstance(value, cst.Call) and dotted_name(value.func) in ("tuple", "list") and len(value.args) == 1:
        mapped = value.args[0].value  # map(sum, zip(t, v))
        if isinstance(mapped, cst.Call) and dotted_name(mapped.func) == "map" and len(mapped.args) == 2 and \
                dotted_name(mapped.args[0].value) == "sum" and isinstance(zipped := mapped.args[1].value, cst.Call) \
                and dotted_name(zipped.func) == "zip" and len(zipped.args) == 2 and \
                dotted_name(zipped.args[0].value) == spelled:
            return zipped.args[1].value
    return None


def _assigned_spellings(target: cst.BaseExpression) -> set[str]:
    """``a``, ``self.a``: what an assignment target (or each element of a tuple target) rebinds."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_assigned_spellings(e.value) for e in target.elements))
    spelled = dotted_name(target)
    return {spelled} if spelled is not None else set()


def _key_expression(key: cst.CSTNode) -> cst.CSTNode:
    """The expression of a subscript key (``k`` of ``d[k]``), unwrapped from its element."""
    if isinstance(key, cst.SubscriptElement):
        key = key.slice
    if isinstance(key, cst.Index):
        key = key.value
    return key


def _is_literal(node: cst.CSTNode) -> bool:
    node = _key_expression(node)
    if isinstance(node, cst.Tuple):
        return all(_is_literal(e.value) for e in node.elements)
    return isinstance(node, (cst.BaseString, cst.Integer, cst.Float))


def _is_range(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and dotted_name(expr.func) == "range"


def _slice_of(expr: cst.BaseExpression, spelled: str) -> bool:
    """``c[a:]``, ``c[-n:]``: a slice of the container spelled ``spelled``."""
    return isinstance(expr, cst.Subscript) and dotted_name(expr.value) == spelled and \
        all(isinstance(element.slice, cst.Slice) for element in expr.slice)


def _is_mapping(expr) -> bool:
    """``{...}``, a dict comprehension, ``dict(...)``, ``defaultdict(...)``, ``OrderedDict(...)``:
    a container that item assignment grows."""
    if isinstance(expr, (cst.Dict, cst.DictComp)):
        return True
    return isinstance(expr, cst.Call) and (dotted_name(expr.func) or "").split(".")[-1] in (
        "dict", "defaultdict", "OrderedDict", "Counter")


def _is_list(expr) -> bool:
    """``[...]``, ``[None] * n``, ``list(...)``: a Python list."""
    if isinstance(expr, cst.List):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return isinstance(expr.left, cst.List) or isinstance(expr.right, cst.List)
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "list"


def _spelled_container(container: cst.BaseExpression) -> Optional[str]:
    """The container a kept value goes into, spelled: ``self.kept`` for ``self.kept[name]`` and
    ``self.kept.setdefault(name, [])`` as for ``self.kept``."""
    if isinstance(container, cst.Subscript):
        container = container.value
    elif isinstance(container, cst.Call) and isinstance(container.func, cst.Attribute) and \
            container.func.attr.value == "setdefault":
        container = container.func.value
    return dotted_name(container)


def _target_names_only(target: cst.BaseExpression) -> bool:
    """``a`` or ``a, b``: plain names, no attribute or item."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_target_names_only(e.value) for e in target.elements)
    return isinstance(target, cst.Name)
