"""Loop-carried values: a name or ``self`` attribute assigned in an iteration from an expression
that reads its own previous value — ``h = rnn(x, h)``, ``out, (h, c) = lstm(x, (h, c))``,
``x_adv = x_adv + eps * x_adv.grad.sign()``, ``ema = d * ema + (1 - d) * loss``,
``self.running_mean = m * self.running_mean + (1 - m) * batch_mean``, ``W = W - lr * W.grad``.

When the new value keeps the graph of the previous one (RULES.md: only ``.detach()``, ``.item()``,
``.tolist()``, ``float()``/``int()``, ``.data`` and grad-disabled code break it), every iteration
links its graph to the previous iteration's: a *graph chain*. ``h = h.detach()``,
``tuple(t.detach() for t in h)``, ``repackage_hidden(h)``, a fresh value (``h = init_hidden()``)
or ``h.detach_()`` anywhere in the iteration cut the chain.

Iterations are loop bodies and per-step methods (``forward``, ``training_step`` ...), where only
``self`` attributes live from one call to the next. A chain matters when it crosses a training
step (the loop runs a backward pass or an optimizer step, or iterates a loader), not inside one
step (``for t in range(seq_len): h = cell(x[t], h)`` is backpropagation through time)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Optional, Union

import libcst as cst

from torchmemlint.semantics.calls import Calls
from torchmemlint.semantics.grad import GradContexts
from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.iterations import Iteration, Iterations, keyword_is_true
from torchmemlint.semantics.scopes import (Loop, Scopes, carried_name, first_param, parameter_names,
                                          steps_an_environment, terminal_name, tests_every_n_steps)
from torchmemlint.semantics.stores import Stores
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import (
    DETACHED_TENSOR_ATTRIBUTES, GRAPH_BREAKING_METHODS, IN_PLACE_FILLS, IN_PLACE_WRITES, PER_EPOCH_METHOD,
    names_a_cache, names_segment_memories,
)
from torchmemlint.semantics.flow import (
    BREAKING_BUILTINS, MAPPING, MODULE, NON_GRAPH_ATTRIBUTES, OPTIMIZER, TENSOR, Flow, Value, destructure,
)

# Helpers that cut a chain by name (``repackage_hidden`` of the PyTorch examples, ``detach_state``).
_BREAKING_FUNCTION = re.compile(r"detach|repackage", re.IGNORECASE)
# Methods that reset recurrent state from outside the step (``model.init_hidden()``, ``reset_states``).
_RESET_METHOD = re.compile(r"reset|init_hidden|init_state|zero_state|repackage|detach|clear", re.IGNORECASE)
MAX_DEPTH = 6

UPDATE = "update"            # arithmetic on the carried value: EMA, running statistics, x_adv, W
STATE = "state"              # anything else, e.g. recurrent state fed back into a module
ACCUMULATION = "accumulation"  # ``t += v`` / ``t = t + v`` with an attached ``v``: TML001's case
JOIN = "join"                # ``acc = torch.cat([acc, x])``: TML008's case

Assignment = Union["cst.Assign", "cst.AnnAssign", "cst.AugAssign"]  # strings: see scopes.Loop


@dataclass(frozen=True)
class InPlaceWrite:
    """At ``site``, ``value`` (holding a graph) is written in place into ``target``, a tensor that
    outlives ``iteration``."""

    site: cst.CSTNode
    target: cst.BaseExpression
    value: cst.BaseExpression
    iteration: Iteration
    slot: bool = False  # an item updated from its own previous value (``ema[k] = d * ema[k] + ...``)
    # UPDATE (the write reads the old value: ``lerp_``, ``mul_(m).add_(v)``), STATE (the tensor is
    # read into a later step's graph: a memory bank, a cache) or ACCUMULATION (a running total or a
    # buffer of results, only read as numbers or without grad: TML001's)
    kind: str = UPDATE

    @property
    def accumulates(self) -> bool:
        return self.kind == ACCUMULATION


@dataclass(frozen=True)
class Carry:
    """At ``site``, ``name`` gets a new value that keeps the graph of its previous one (``reads``
    are where the previous iteration's value is read), in ``iteration``."""

    name: str
    site: Assignment
    iteration: Iteration
    reads: tuple[cst.BaseExpression, ...]
    kind: str
    requires_grad: bool
    # ``ema = loop_body(x, ema)``: the callee computes the new value, and its carry is found there
    in_callee: bool = False


class LoopCarried:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, calls: Calls, grad: GradContexts,
                 flow: Flow, stores: Stores, iterations: Iterations) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.calls = calls
        self.grad = grad
        self.flow = flow
        self.stores = stores
        self.iterations = iterations
        self._region_assignments: dict[cst.CSTNode, list[Assignment]] = {}
        self._region_assignments_by_name: dict[cst.CSTNode, dict[str, list[Assignment]]] = {}
        self._in_place_detached: dict[cst.CSTNode, set[str]] = {}
        self._requiring_grad: dict[object, set[str]] = {}
        self._parameter_cuts: dict[tuple[cst.FunctionDef, str], bool] = {}
        self._sampling: dict[cst.CSTNode, bool] = {}  # region -> ``_samples`` (asked per carry site)

    # -- graph chains ------------------------------------------------------------------
    @cached_property
    def chains(self) -> list[Carry]:
        """Carry sites whose new value holds a graph linked to the previous iteration's, in
        iterations that cross a training step, with nothing in the iteration cutting the chain."""
        found: list[Carry] = []
        regions: list[Iteration] = [*self.tree.nodes(cst.For), *self.tree.nodes(cst.While)]
        regions += [f for f in self.tree.nodes(cst.FunctionDef) if self.iterations.runs_per_step(f)]
        for region in regions:
            # A step function whose ``create_graph=True`` gradient unrolls what it differentiates
            # (MAML's ``self.fast``) still carries the rest of ``self`` from call to call (a gradient
            # penalty's running mean: StyleGAN2's ``self.pl_mean``).
            crosses = self._crosses_step(region)
            unrolled = isinstance(region, cst.FunctionDef) and not crosses
            # An unroll of gradient steps differentiated as a whole afterwards (hyper-gradients,
            # MAML) still must not carry an attack's input: a backward through the perturbation
            # steps (``x_adv + eps * grad.sign()``) trains nothing, it only keeps them all.
            perturbed = not crosses and not unrolled and self.iterations.differentiates_through_steps(region)
            if not crosses and not unrolled and not perturbed:
                continue
            sites_by_name: dict[str, list[Assignment]] = {}
            for site in self._assignments(region):
                for name in self._assigned_names(site):
                    if unrolled and (not name.startswith("self.") or self._differentiated_with_respect_to(name, region)):
                        continue
                    if perturbed and not self._perturbation_step(site):
                        continue
                    if isinstance(region, cst.FunctionDef) and name.startswith("self.") and name.count(".") == 1 and \
                            self.stores.object_dies_with_the_step_of_its_calls(region):
                        continue  # (``state = LoopState(x)`` per forward, ``state.step(block)`` per layer)
                    if isinstance(region, cst.FunctionDef) and not name.startswith("self.") and (
                            not self.iterations.fed_back(region, name, counts=self._grad_enabled)
                            or self.scopes.of_module_class(region)):
                        continue  # a per-step method's locals die with the call (what a model's own
                        # method hands back, the loop that feeds it back carries: ``_, h = policy.act(obs, h)``)
                    sites_by_name.setdefault(name, []).append(site)
            for name, sites in sites_by_name.items():
                # (what no site reads of the previous iteration cannot be carried: asked first, as
                # it is the cheapest question and most assignments of a loop answer it)
                reads_by_site = {site: self._previous_reads(site, name, region) for site in sites}
                if not any(reads_by_site.values()) or names_a_cache(name) or \
                        names_segment_memories(name) and self._memories_come_detached(name) or \
                        self._cut(name, sites, region):
                    continue  # (a cache is carried on purpose; the memories come detached)
                requires_grad = self._requires_grad(name, region)
                made_with_graph: Optional[bool] = None  # (another site of the iteration gives it a graph)
                for site in sites:
                    reads = reads_by_site[site]
                    if not reads:
                        continue
                    if self.flow.value(site.value, site).kind in (MODULE, OPTIMIZER) or _moves_itself(site, name):
                        continue  # ``vae = vae.to(device)``: a module (or ``memory = memory.to(device)``, the tensor) moved, not computed
                    attached = self._attached(site, requires_grad, name)
                    if not attached and len(sites) > 1:
                        # ``hidden = reset_rows(hidden, mask)`` hands on the previous iteration's value,
                        # which ``logit, hidden = gru(x, hidden)`` made with a graph
                        if made_with_graph is None:
                            made_with_graph = any(self._attached(other, requires_grad, name) for other in sites)
                        attached = made_with_graph
                    if attached:
                        found.append(Carry(name, site, region, reads, self._kind(site, name, region), requires_grad,
                                           self._carried_inside_callee(site, name)))
        return found

    def _memories_come_detached(self, name: str) -> bool:
        """Transformer-XL's memories come back detached from the model that makes them, unless
        that model is one of this file's, whose ``forward`` takes them (a parameter of that name)
        and returns what it builds from them with a graph (``torch.cat([mems[i], h])``)."""
        short = name.rpartition(".")[2]
        for cls in self.scopes.classes_by_name.values():
            forward = self.flow.calls.method_of(cls, "forward") if self.scopes.is_torch_module_class(cls) else None
            if forward is not None and short in parameter_names(forward):
                returned = self.flow.summary(forward).returns
                if returned.graph or any(part.graph for part in returned.elements or ()):
                    return False
        return True

    def _grad_enabled(self, site: cst.CSTNode) -> bool:
        """(A call that feeds a value back under ``no_grad``, a rollout's, carries no graph.)"""
        return not self.grad.is_disabled(site)

    def _carried_inside_callee(self, site: Assignment, name: str) -> bool:
        value = getattr(site, "value", None)
        if not isinstance(value, cst.Call):
            return False
        callee = self.flow.calls.callee(value)
        if callee is None or not isinstance(callee.function, cst.FunctionDef) or self.scopes.of_module_class(callee.function):
            return False
        return any(isinstance(expr, cst.Name) and expr.value == name and self.iterations.fed_back(callee.function, param)
                   for param, given in self.flow.calls.arguments(value, callee).items() for expr, _ in given)

    def _cut(self, name: str, sites: list[Assignment], region: Iteration) -> bool:
        """Something in the iteration gives ``name`` a value without the old one's graph: a
        fresh or detached assignment (not the ``if h is None:`` initialisation), another kind of
        binding (a loop target, ``with ... as``), ``h.detach_()``, or a reset of the attribute."""
        for site in sites:
            if isinstance(site, cst.AugAssign) or self.scopes.gives_first_value(site, name) \
                    or self._starts_episode(site, region) or self._resets_on_a_data_flag(site, region, name) \
                    or _resets_or_keeps(site, name):
                continue
            if self.grad.is_disabled(site) or not any(
                    self._graph_reads(site.value, name, region, site, 0, previous_only=False)):
                return True
        if any(not isinstance(b, (cst.Assign, cst.AnnAssign, cst.AugAssign)) for b in self.bindings_in(name, region)):
            return True
        return self._cut_elsewhere(name, region)

    def _crosses_step(self, region: Iteration) -> bool:
        if self.iterations.differentiates_through_steps(region):
            return False
        if isinstance(region, cst.FunctionDef):
            return True
        if self.iterations.runs_step(region):
            return True
        # (a loop over a sequence's snapshots with the backward after it, at its own depth: the
        # whole sequence backpropagated at once, on purpose; what its state carries past that
        # backward, the loop around it carries)
        return self.iterations.iterates_loader(region) and not self.scopes.step_follows(region) or (
            isinstance(region, cst.For) and self.scopes.evaluates_each_element(region)  # (grad on: the chain grows)
        ) or self._runs_model_per_step(region) or self.iterations.trains_through_calls(region)

    def _runs_model_per_step(self, loop: Loop) -> bool:
        """A rollout (a loop stepping an environment: ``env.step(action)``), another step loop
        (``for step in itertools.count()``) or a loop of evaluation code that runs a model each
        iteration, with no backward after it in the function (that would be backpropagation
        through the episode or the unroll, on purpose). A loop of a numerical algorithm
        (``for _ in range(iters)`` of a Sinkhorn normalisation) runs no model."""
        calls = self.scopes.loop_body_nodes(loop, cst.Call)
        if self.scopes.steps_environment_in(loop) or self._steps_environment_through_a_helper(calls):
            return not self.scopes.step_follows(loop)
        if not any(self.iterations.runs_forward(call) for call in calls):
            return False
        # A generation loop of evaluation code (``model.eval()``, then ``output, hidden =
        # model(inp, hidden)`` word after word) is a step loop too, whatever it iterates.
        if self.scopes.is_step_loop(loop):
            return True
        if not _counts(loop) or self.scopes.step_follows(loop):
            return False
        if self.scopes.in_generation_function(loop) or \
                self.scopes.in_inference_function(loop) and not self.scopes.in_model_method(loop):
            return True  # ``def generate_text(self, ...)`` of a model; a script's ``def infer(model, scheduler)``
        return not self.scopes.in_model_method(loop) and self.scopes.is_evaluation_code(self.scopes.scope_of(loop))

    def _steps_environment_through_a_helper(self, calls: tuple) -> bool:
        """A rollout written with a helper of the file (``act_in_env(env, belief, ...)``, whose
        body does ``env.step(action)``)."""
        return any((callee := self.flow.calls.callee(call)) is not None and callee.constructs is None
                   and isinstance(callee.function, cst.FunctionDef)
                   and any(steps_an_environment(c) for c in self.scopes.scope_nodes(callee.function, cst.Call))
                   for call in calls)

    def _assignments(self, region: Iteration) -> list[Assignment]:
        """The assignments of ``region`` in source order (asked again for each attribute a carry
        reads: once per region)."""
        known = self._region_assignments.get(region)
        if known is None:
            known = self._region_assignments[region] = self._collect_assignments(region)
        return known

    def _assignments_by_name(self, region: Iteration) -> dict[str, list[Assignment]]:
        """``_assignments`` by each name they assign, in source order (once per region)."""
        known = self._region_assignments_by_name.get(region)
        if known is None:
            known = self._region_assignments_by_name[region] = {}
            for site in self._assignments(region):
                for name in set(self._assigned_names(site)):
                    known.setdefault(name, []).append(site)
        return known

    def _collect_assignments(self, region: Iteration) -> list[Assignment]:
        nodes: list[Assignment] = []
        for node_type in (cst.Assign, cst.AnnAssign, cst.AugAssign):
            if isinstance(region, cst.FunctionDef):
                nodes += self.scopes.scope_nodes(region, node_type)
            else:
                nodes += self.scopes.loop_body_nodes(region, node_type)
        nodes = [n for n in nodes if not isinstance(n, cst.AnnAssign) or n.value is not None]
        return sorted(nodes, key=self.tree.start.__getitem__)

    @staticmethod
    def _assigned_names(site: Assignment) -> list[str]:
        targets = [t.target for t in site.targets] if isinstance(site, cst.Assign) else [site.target]
        names: list[str] = []
        while targets:
            target = targets.pop()
            if isinstance(target, (cst.Tuple, cst.List)):
                targets.extend(e.value for e in target.elements)
            elif isinstance(target, cst.StarredElement):
                targets.append(target.value)
            else:
                name = carried_name(target)
                if name is not None:
                    names.append(name)
        return names

    def _previous_reads(self, site: Assignment, name: str, region: Iteration) -> tuple:
        """Reads of ``name``'s previous-iteration value whose graph the new value keeps."""
        if self.grad.is_disabled(site):
            return ()
        if isinstance(site, cst.AugAssign):
            return (site.target,) if self.reaches_previous(site, name, region) else ()
        return tuple(self._graph_reads(site.value, name, region, site, 0))

    def _graph_reads(self, expr: cst.BaseExpression, name: str, region: cst.CSTNode, site: cst.CSTNode,
                     depth: int, previous_only: bool = True) -> Iterator[cst.BaseExpression]:
        """Reads of ``name`` in ``expr`` on a path that keeps the graph (not under ``.detach()``,
        ``.item()``, ``.data``, ``float()``, a ``repackage_hidden()`` ...) and, with
        ``previous_only``, that see the previous iteration's value."""
        if depth > MAX_DEPTH:
            return
        # (``type(...) is``, not ``isinstance``: these are concrete LibCST classes, and a miss of
        # ``isinstance`` costs their ABC metaclass's check, millions of times in a long method)
        expr_type = type(expr)
        if carried_name(expr) == name:
            if not previous_only or self.reaches_previous(site, name, region):
                yield expr
            return
        if expr_type is cst.Name:  # through a local computed from it in this iteration
            for binding in self.scopes.reaching_bindings(expr.value, expr):
                if binding.value is not None and self.tree.contains(region, binding.node) and \
                        self.tree.before(binding.node, site) and not self.grad.is_disabled(binding.node):
                    yield from self._graph_reads(binding.value, name, region, binding.node, depth + 1, previous_only)
            return
        if expr_type is cst.Attribute:
            spelled = carried_name(expr)
            if spelled is not None and spelled.startswith("self.") and spelled != name and depth < 2 and \
                    isinstance(region, (cst.For, cst.While, cst.FunctionDef)):  # (a step's own chain: short)
                # ``self.spk = fire(self.mem)`` after ``self.mem = ... self.spk ...`` in the same step
                earlier = [b for b in self.bindings_in(spelled, region)
                           if isinstance(b, cst.Assign) and self.tree.before(b, site)]
                if earlier and not self.grad.is_disabled(earlier[-1]):
                    yield from self._graph_reads(earlier[-1].value, name, region, earlier[-1], depth + 1, previous_only)
            if expr.attr.value not in NON_GRAPH_ATTRIBUTES:
                yield from self._graph_reads(expr.value, name, region, site, depth, previous_only)
            return
        if expr_type is cst.Call:
            if self.breaks_graph(expr):
                return
            if isinstance(expr.func, cst.Attribute):
                yield from self._graph_reads(expr.func.value, name, region, site, depth, previous_only)
            cut = self._arguments_cut_by_callee(expr)
            for arg in expr.args:
                if arg.value not in cut:
                    yield from self._graph_reads(arg.value, name, region, site, depth, previous_only)
            return
        if expr_type is cst.BinaryOperation:
            yield from self._graph_reads(expr.left, name, region, site, depth, previous_only)
            yield from self._graph_reads(expr.right, name, region, site, depth, previous_only)
        elif expr_type is cst.UnaryOperation and not isinstance(expr.operator, cst.Not):
            yield from self._graph_reads(expr.expression, name, region, site, depth, previous_only)
        elif expr_type is cst.Subscript:
            yield from self._graph_reads(expr.value, name, region, site, depth, previous_only)
        elif expr_type is cst.Tuple or expr_type is cst.List:
            for element in expr.elements:
                yield from self._graph_reads(element.value, name, region, site, depth, previous_only)
        elif expr_type is cst.IfExp:
            # At the carry site a bare ``name`` branch only selects the old value (``h = h if ok
            # else h0``); in a local computed from, it hands the old value on (``word = prev if prev
            # is not None else bos``, then ``prev = decoder(word)``).
            for branch in (expr.body, expr.orelse):
                if carried_name(branch) != name or depth > 0:
                    yield from self._graph_reads(branch, name, region, site, depth, previous_only)
        elif expr_type is cst.GeneratorExp or expr_type is cst.ListComp:
            # ``tuple(t.detach() for t in h)`` breaks; ``[w - lr * g for w, g in zip(ws, gs)]`` keeps
            comp = expr.for_in
            element_keeps = not isinstance(comp.target, cst.Name) or any(
                self._graph_reads(expr.elt, comp.target.value, expr, expr.elt, depth + 1, previous_only=False))
            if element_keeps:
                yield from self._graph_reads(comp.iter, name, region, site, depth, previous_only)
        elif expr_type is cst.NamedExpr or expr_type is cst.StarredElement:
            yield from self._graph_reads(expr.value, name, region, site, depth, previous_only)

    def _arguments_cut_by_callee(self, call: cst.Call) -> set[cst.BaseExpression]:
        """The arguments of a call of the file's function whose parameter the callee cuts from
        its history before anything else reads it (``hidden = repackage_hidden(hidden)`` as the
        first use in ``compute_step(batch, hidden)``): nothing the call returns links to them."""
        callee = self.flow.calls.callee(call)
        if callee is None or not isinstance(callee.function, cst.FunctionDef):
            return set()
        return {expr for param, given in self.flow.calls.arguments(call, callee).items()
                if self._cuts_parameter(callee.function, param) for expr, _ in given}

    def _cuts_parameter(self, function: cst.FunctionDef, param: str) -> bool:
        key = (function, param)
        known = self._parameter_cuts.get(key)
        if known is None:
            uses = [n for n in self.scopes.scope_nodes(function, cst.Name)
                    if n.value == param and not isinstance(self.tree.parent.get(n), cst.Param)]
            first = uses[0] if uses else None
            assign = self.tree.statement_of(first) if first is not None else None
            known = self._parameter_cuts[key] = isinstance(assign, cst.SimpleStatementLine) and \
                len(assign.body) == 1 and isinstance(small := assign.body[0], cst.Assign) and \
                len(small.targets) == 1 and carried_name(small.targets[0].target) == param and \
                isinstance(small.value, cst.Call) and self.breaks_graph(small.value)
        return known

    def breaks_graph(self, call: cst.Call) -> bool:
        func = call.func
        if self.imports.qualify(func) == "torch.autograd.grad":  # gradients hold no graph without create_graph
            return not keyword_is_true(call, "create_graph")
        if isinstance(func, cst.Attribute):
            if func.attr.value in GRAPH_BREAKING_METHODS:
                return True
            # (``self.repackage_hidden(h)``, and the model's own from outside: ``model.repackage_hidden(h)``)
            return _BREAKING_FUNCTION.search(func.attr.value) is not None and \
                (dotted_name(func.value) == "self" or self._runs_a_detaching_method(call))
        if isinstance(func, cst.Name):
            if func.value in BREAKING_BUILTINS or func.value in ("min", "max"):
                return True
            helpers = self.scopes.functions_by_name.get(func.value, [])
            if not helpers:
                return _BREAKING_FUNCTION.search(func.value) is not None
            # a helper of this file, named or written to detach, that does not hand containers
            # back as they came (``detach_hiddens`` detaching a tensor, returning an LSTM's
            # ``(h, c)`` tuple untouched)
            return (_BREAKING_FUNCTION.search(func.value) is not None or any(map(self._detaches, helpers))) and \
                not any(map(self.flow.hands_back_containers, helpers))
        return False

    def _runs_a_detaching_method(self, call: cst.Call) -> bool:
        """The method the call runs detaches; one this file does not define is taken at its name."""
        callee = self.flow.calls.callee(call)
        return callee is None or not isinstance(callee.function, cst.FunctionDef) or self._detaches(callee.function)

    def _read_attached(self, read: cst.BaseExpression, within: cst.BaseExpression) -> bool:
        """``read`` reaches ``within``'s value with its graph: no ``.detach()``, ``.item()``,
        ``.data`` or other graph-breaking call applied to it on the way."""
        node = read
        while node is not within:
            parent = self.tree.parent.get(node)
            if parent is None:
                return True
            if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in NON_GRAPH_ATTRIBUTES:
                return False
            if isinstance(parent, cst.Call) and parent.func is not node and self.breaks_graph(parent) and (
                    not isinstance(parent.func, cst.Attribute) or parent.func.value is not node):
                return False  # ``repackage(ema[k])``
            grand = self.tree.parent.get(parent)
            if isinstance(parent, cst.Attribute) and isinstance(grand, cst.Call) and grand.func is parent and \
                    self.breaks_graph(grand):
                return False  # ``ema[k].detach()``
            node = parent
        return True

    def _detaches(self, func: cst.FunctionDef) -> bool:
        """A helper of this file that detaches what it is given (a local ``repackage_hidden``)."""
        return any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value in ("detach", "detach_")
            for c in self.tree.descendants(func, cst.Call)
        )

    def reaches_previous(self, site: cst.CSTNode, name: str, region: Iteration) -> bool:
        """No binding of ``name`` earlier in the same iteration surely runs before ``site``."""
        if isinstance(region, (cst.For, cst.While)) and name in _target_names(region):
            return False
        for other in self.bindings_in(name, region):
            if other is site or self.tree.contains(other, site) or not self.tree.before(other, site):
                continue
            if self._surely_runs_before(other, site) and not _resets_or_keeps(other, name):
                return False  # (``hx = zeros(...) if done else hx`` hands the previous value on)
        return True

    def _surely_runs_before(self, earlier: cst.CSTNode, later: cst.CSTNode) -> bool:
        """``earlier`` (before ``later`` in the source) runs whenever ``later`` does: no
        if/else, loop or try branch holds it without holding ``later``."""
        for ancestor in self.tree.ancestors(earlier):
            if isinstance(ancestor, (cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.TryStar, cst.ExceptHandler,
                                     cst.ExceptStarHandler)):
                return False  # a branch of its own, or the if/else holding both in different arms
            if self.tree.contains(ancestor, later):
                return True
        return True

    def kept_arm(self, carry: Carry) -> Optional[cst.BaseExpression]:
        """The arm that hands the previous value on where the iteration resets it only on some
        steps (``hidden`` of ``hidden = torch.zeros(1, 128) if done else hidden``): where a cut
        once per iteration belongs."""
        for binding in self.bindings_in(carry.name, carry.iteration):
            if _resets_or_keeps(binding, carry.name):
                value = binding.value
                return value.body if carried_name(value.body) == carry.name else value.orelse
        return None

    def bindings_in(self, name: str, region: Iteration) -> list[cst.CSTNode]:
        body = region if isinstance(region, cst.FunctionDef) else region.body
        if name.startswith("self."):
            return self._assignments_by_name(region).get(name, [])
        scope = self.scopes.scope_of(region) if not isinstance(region, cst.FunctionDef) else region
        # (a parameter's binding is the value the call brings in: the previous one, when fed back)
        return [b.node for b in self.scopes.bindings(scope).get(name, [])
                if self.tree.contains(body, b.node) and not isinstance(b.node, cst.Param)]

    def _starts_episode(self, site: Assignment, region: Iteration) -> bool:
        """``if done: hx = torch.zeros(...)`` in a rollout: a first value for each episode, which
        cuts the chain only when an episode ends; on every other step it grows."""
        if isinstance(region, cst.FunctionDef) or not self.scopes.steps_environment_in(region):
            return False
        for ancestor in self.tree.ancestors(site):
            if ancestor is region:
                return False
            if type(ancestor) is cst.If:
                return self._tests_episode_end(ancestor.test, ancestor) and self.tree.contains(ancestor.body, site)
        return False

    def _resets_on_a_data_flag(self, site: Assignment, region: Iteration, name: str) -> bool:
        """``if new_round.any(): hidden = None`` in a loop that trains every step: a
        first value for each sequence the data marks, which cuts the chain only where the flag is
        set (unlike a reset every N steps, truncated backpropagation through time, or a test of the
        state itself: ``if self.hidden is not None: self.hidden = repackage(self.hidden)``)."""
        if isinstance(region, cst.FunctionDef) or not self.iterations.runs_step(region):
            return False
        for ancestor in self.tree.ancestors(site):
            if ancestor is region:
                return False
            if type(ancestor) is cst.If:
                # (a bare ``if``: with an ``else`` every path assigns; a test of what the loop
                # binds, not of a setting, which holds on every iteration or on none)
                tested = {n.value for n in self.tree.descendants(ancestor.test, cst.Name)}
                return ancestor.orelse is None and self.tree.contains(ancestor.body, site) \
                    and not tests_every_n_steps(ancestor.test, self.tree) \
                    and any(self.scopes.is_bound_in(n, region, plain_only=False) for n in tested) \
                    and not any(dotted_name(n) == name for n in self.tree.descendants(
                        ancestor.test, cst.Attribute if "." in name else cst.Name))
        return False

    def _tests_episode_end(self, test: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``done``, ``done[0]``, ``done or truncated``, ``any(dones)``, ``dones.any()``: a flag
        named so, or what an environment's ``step`` returns after the reward (``obs, r, over, _ =
        env.step(a)``)."""
        if isinstance(test, cst.BooleanOperation):
            return self._tests_episode_end(test.left, at) or self._tests_episode_end(test.right, at)
        if isinstance(test, cst.Call):
            if dotted_name(test.func) in ("any", "all") and test.args:
                return self._tests_episode_end(test.args[0].value, at)
            return isinstance(test.func, cst.Attribute) and test.func.attr.value in ("any", "all") and \
                self._tests_episode_end(test.func.value, at)
        if isinstance(test, cst.Subscript):
            test = test.value
        name = dotted_name(test)
        if name is None:
            return False
        if _EPISODE_END.search(name.split(".")[-1]) is not None:
            return True
        return isinstance(test, cst.Name) and any(
            b.index is not None and b.index >= 2 and isinstance(b.value, cst.Call) and steps_an_environment(b.value)
            for b in self.scopes.bindings(self.scopes.scope_of(at)).get(test.value, []))

    def _cut_elsewhere(self, name: str, region: Iteration) -> bool:
        """``h.detach_()`` in the iteration; for a ``self`` attribute, a reset elsewhere in the
        class or file (``model.hidden = model.init_hidden()``, a ``reset_states`` method)."""
        body = region if isinstance(region, cst.FunctionDef) else region.body
        if name in self._detached_in_place(body):
            return True
        if not name.startswith("self."):
            return False
        attribute = name.split(".", 1)[1]
        func = region if isinstance(region, cst.FunctionDef) else self.scopes.function_of(region)
        cls = self.scopes.self_class(func)
        lineage = [cls, *(c for base in self.scopes.class_bases(cls)
                          if (c := self.scopes.classes_by_name.get(base)) not in (None, cls))] if cls is not None else []
        if any(  # (a method of the instance or class, its own or a base class's of the file: a static
            # ``hard_reset(v, spike)`` computes; one that returns a fresh state, ``init_hidden``, resets only
            # where its result is bound; one that only zeroes buffers in place keeps them in the graph)
            _RESET_METHOD.search(f.name.value) and f.params.params and f.params.params[0].name.value in ("self", "cls")
            and not any(r.value is not None for r in self.scopes.scope_nodes(f, cst.Return))
            and self._resets_attribute(f, attribute, cls) and not self._only_fills_in_place(f)
            and self._runs_per_step_if_called(f) for owner in lineage for f in self.tree.descendants(owner, cst.FunctionDef)
        ):
            return True
        for assign in self._attribute_assignments.get(attribute, ()):
            owner = self.scopes.function_of(assign)
            if _copies_attribute(assign, attribute) or _moves_itself(assign, name):
                # (``algorithm.time_p = self.time_p`` hands the state on, ``self.time_p =
                # self.time_p.to(device)`` moves it: neither resets it)
                continue
            if self.tree.contains(body, assign):
                continue
            if isinstance(self.iterations.step_iteration(assign), (cst.For, cst.While)):
                return True  # reset on every step of a loop (``model.hidden = model.init_hidden()`` per batch)
            if owner is not None and self._steps_once_per_call(owner) and not self.scopes.loops_around(assign):
                return True  # (the update that ends a rollout: ``self.states = self.states.detach()`` after its step)
            if owner is not None and (
                    owner.name.value == "__init__" or PER_EPOCH_METHOD.match(owner.name.value)
                    or self._before_the_step_loop(owner, assign) or (
                    # (a reset method, or any method the file calls: ``trainer.epoch_init()``)
                    (_RESET_METHOD.search(owner.name.value) or self._calls_of(owner))
                    and not self._runs_per_step_if_called(owner))):
                continue  # (a reset the file runs once per epoch leaves the chain growing within it)
            return True
        return False

    def _steps_once_per_call(self, function: cst.FunctionDef) -> bool:
        """``function`` is one update: its backward or optimizer step sits outside any loop of
        its own (``agent.update(obs)`` after a rollout of many forwards), so a reset in its body
        runs once per step, however its callers' loops are nested."""
        return any(not self.scopes.loops_around(call) for call in self.iterations.step_calls(function))

    def _before_the_step_loop(self, function: cst.FunctionDef, assign: cst.CSTNode) -> bool:
        """``model.hidden = model.init_hidden()`` in a training function, outside the loop over
        batches that it runs: once per call, an epoch, not once per step."""
        loops = [loop for kind in (cst.For, cst.While) for loop in self.scopes.scope_nodes(function, kind)
                 if self.scopes.is_step_loop(loop)]
        return bool(loops) and not any(self.tree.contains(loop, assign) for loop in loops)

    def _only_fills_in_place(self, method: cst.FunctionDef) -> bool:
        """``buf.zero_()`` for each state buffer, and nothing rebound or detached: an in-place
        write is recorded by autograd, so the buffer still leads back to the last step's graph."""
        calls = self.scopes.scope_nodes(method, cst.Call)
        fills = [c for c in calls if isinstance(c.func, cst.Attribute) and c.func.attr.value in IN_PLACE_FILLS]
        return bool(fills) and not self.scopes.scope_nodes(method, cst.Assign) and not any(
            isinstance(c.func, cst.Attribute) and "detach" in c.func.attr.value for c in calls)

    def _detached_in_place(self, body: cst.CSTNode) -> set[str]:
        """Names and attribute chains ``body`` detaches in place: ``h.detach_()``,
        ``hidden[0].detach_()`` (once per body)."""
        known = self._in_place_detached.get(body)
        if known is None:
            known = self._in_place_detached[body] = set()
            for call in self.tree.descendants(body, cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and (func.attr.value == "detach_" or
                                                        "detach" in func.attr.value and self._detaches_own_state(call)):
                    detached = func.value
                    while isinstance(detached, cst.Subscript):  # ``hidden[0].detach_()``
                        detached = detached.value
                    spelled = carried_name(detached)
                    if spelled is not None:
                        known.add(spelled)
        return known

    def _detaches_own_state(self, call: cst.Call) -> bool:
        """``state.detach()`` on an object of the file whose method rebinds its own attributes
        to detached values (``self.hidden = tuple(h.detach() for h in self.hidden)``), in place as
        ``detach_()`` is. (One that only calls ``h.detach()`` and drops the result cuts nothing.)"""
        callee = self.flow.calls.callee(call)
        if callee is not None:
            methods = [callee.function] if callee.skipped and isinstance(callee.function, cst.FunctionDef) else []
        else:  # (``state`` returned by a model's ``forward``: the file's methods of that name)
            methods = [f for f in self.scopes.functions_by_name.get(call.func.attr.value, ())
                       if self.scopes.class_of(f) is not None]
        return bool(methods) and all(self._attributes_rebound_detached(method) for method in methods)

    def _attributes_rebound_detached(self, method: cst.FunctionDef) -> set[str]:
        """The attributes of its own object that ``method`` rebinds, or rebinds an item of, to a
        ``.detach()`` (``self.hidden = h.detach()``, ``self.memory[node] = self.memory[node].detach()``)."""
        own = first_param(method)
        found = set()
        for assign in self.scopes.scope_nodes(method, cst.Assign):
            if not any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "detach"
                       for c in self.tree.descendants(assign.value, cst.Call)):
                continue
            for t in assign.targets:
                written = t.target.value if isinstance(t.target, cst.Subscript) else t.target
                if isinstance(written, cst.Attribute) and dotted_name(written.value) == own:
                    found.add(written.attr.value)
        return found

    @cached_property
    def _attribute_assignments(self) -> dict[str, list[cst.Assign]]:
        """The file's assignments to an attribute (``x.hidden = ...``), by the attribute's name."""
        found: dict[str, list[cst.Assign]] = {}
        for assign in self.tree.nodes(cst.Assign):
            for attribute in {t.target.attr.value for t in assign.targets if isinstance(t.target, cst.Attribute)}:
                found.setdefault(attribute, []).append(assign)
        return found

    def _resets_attribute(self, method: cst.FunctionDef, attribute: str, cls: cst.ClassDef) -> bool:
        """Whether a reset method may reset ``attribute``: it names it (``self.h = None``,
        ``layer.mem.detach_()``), or names none of the attributes the class sets on ``self`` (it
        delegates: ``for m in self.modules(): m.reset()``). One that resets others only
        (``detach_hidden`` of the membrane, not of the spike) leaves it carried."""
        named = {a.attr.value for a in self.tree.descendants(method, cst.Attribute)}
        return attribute in named or not named & self.flow.calls.attributes_set_on_self(cls)

    def _calls_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The calls spelled as calls of ``function``: ``x.name(...)`` for a method, ``name(...)``
        for a plain function (which ``net.train()`` does not call)."""
        return self.flow.calls.calls_spelled(function.name.value, method=self.scopes.class_of(function) is not None)

    def _runs_per_step_if_called(self, method: cst.FunctionDef) -> bool:
        """A reset method that this file never calls (a framework may, every step), or calls in
        a step loop; not one called only once per epoch (``learner.reset()`` after the loop over
        batches), while the chain grows batch after batch."""
        sites = self._calls_of(method)
        if not sites:
            return not self._trains_without_resets
        return any(
            self._in_innermost_step_loop(site)
            or ((caller := self.scopes.function_of(site)) is not None and self._runs_per_batch(caller))
            for site in sites)

    def _runs_per_batch(self, func: cst.FunctionDef, depth: int = 0) -> bool:
        """A per-step method, or a function called in an innermost step loop (``train_batch``),
        or from one that runs so (two calls deep at most): not an ``evaluate(model, loader)`` the
        epoch loop calls, which runs once per epoch even though it is called from a step loop."""
        return self.scopes.is_per_step_method(func) or self.iterations.runs_per_step(func) and any(
            self._in_innermost_step_loop(site)
            or depth < 2 and (caller := self.scopes.function_of(site)) is not None and caller is not func
            and self._runs_per_batch(caller, depth + 1)
            for site in self.flow.calls.call_sites(func))

    @cached_property
    def _trains_without_resets(self) -> bool:
        """The file runs its own training loop (a loop with a backward pass or an optimizer
        step) and calls no reset of any kind (``m.reset()``, ``reset_net(net)``, ``init_hidden``):
        an uncalled reset method is then not called by a framework on this file's behalf."""
        return any(self.iterations.runs_step(loop) for loop in (*self.tree.nodes(cst.For), *self.tree.nodes(cst.While))) \
            and not any(_RESET_METHOD.search((func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)) or "")
                        for func in (call.func for call in self.tree.nodes(cst.Call)))

    def _in_innermost_step_loop(self, node: cst.CSTNode) -> bool:
        """``node`` runs once per step: in a step loop with no step loop of its own inside (not
        in an epoch loop around the loop over batches)."""
        def steps(loop: Loop) -> bool:
            return self.scopes.is_step_loop(loop) or self.iterations.runs_step(loop) or \
                self.iterations.trains_through_calls(loop)

        innermost = next((loop for loop in self.scopes.loops_around(node) if steps(loop)), None)
        if innermost is None:
            return False
        inner = [*self.scopes.loop_body_nodes(innermost, cst.For), *self.scopes.loop_body_nodes(innermost, cst.While)]
        # (``for epoch in ...: trainer.epoch_init(); trainer.train_one_epoch(loader)``: the loop over
        # batches is the callee's, so this one runs once per epoch)
        inner += [loop for call in self.scopes.loop_body_nodes(innermost, cst.Call)
                  if (callee := self.flow.calls.callee(call)) is not None and isinstance(callee.function, cst.FunctionDef)
                  for loop in (*self.scopes.scope_nodes(callee.function, cst.For),
                               *self.scopes.scope_nodes(callee.function, cst.While))]
        return not any(steps(loop) for loop in inner)

    def _requires_grad(self, name: str, region: Iteration) -> bool:
        """Evidence that the carried tensor itself requires grad: ``x.requires_grad_()``,
        ``requires_grad=True``, ``nn.Parameter(...)``, a read of ``x.grad``, or
        ``torch.autograd.grad(loss, x)``."""
        scope = region if isinstance(region, cst.FunctionDef) else self.scopes.scope_of(region)
        if name in self._marked_requiring_grad(scope):
            return True
        if "." not in name:
            for binding in self.scopes.bindings(scope).get(name, []):
                value = binding.value
                if value is None:
                    continue
                for call in self.tree.descendants(value, cst.Call):
                    if any(a.keyword is not None and a.keyword.value == "requires_grad" and
                           isinstance(a.value, cst.Name) and a.value.value == "True" for a in call.args):
                        return True
                    if (self.imports.qualify(call.func) or "") == "torch.nn.Parameter":
                        return True
                    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_":
                        return True
        return False

    def _marked_requiring_grad(self, scope) -> set[str]:
        """Names and attribute chains ``scope`` marks as requiring grad: ``x.requires_grad_()``,
        differentiated with respect to (``torch.autograd.grad(loss, x)``), ``x.grad`` read,
        ``x.requires_grad = True`` (once per scope)."""
        known = self._requiring_grad.get(scope)
        if known is not None:
            return known
        known = self._requiring_grad[scope] = set()
        for call in self.scopes.scope_nodes(scope, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "requires_grad_" and \
                    (spelled := carried_name(func.value)) is not None:
                known.add(spelled)
            known |= self.flow.differentiated_inputs(call)
        for attribute in self.scopes.scope_nodes(scope, cst.Attribute):
            if attribute.attr.value not in ("grad", "requires_grad"):
                continue
            spelled = carried_name(attribute.value)
            if spelled is None:
                continue
            parent = self.tree.parent.get(attribute)
            assigned = isinstance(parent, cst.AssignTarget)
            if attribute.attr.value == "grad" and not assigned:  # reading ``x.grad``
                known.add(spelled)
            elif attribute.attr.value == "requires_grad" and assigned and \
                    _is_true(self.tree.parent[parent].value):  # ``x.requires_grad = True``
                known.add(spelled)
        return known

    def _attached(self, site: Assignment, requires_grad: bool, name: str) -> bool:
        if requires_grad:
            return True
        targets = site.targets if isinstance(site, cst.Assign) else ()
        if len(targets) == 1 and isinstance(targets[0].target, (cst.Tuple, cst.List)):
            value = self.flow.value(site.value, site)
            element = destructure(value, targets[0].target, name)
            if element.detached:
                return False  # ``out, M, z = model(x, M, z)`` whose forward returns ``M`` detached
            if value.elements is not None:  # (a helper's ``return hidden, next_obs, reward, done``)
                return self._value_holds_graph(element, site)
        return self.holds_graph(site.value, site)

    def holds_graph(self, expr: cst.BaseExpression, site: cst.CSTNode) -> bool:
        """``expr`` holds a graph: of its own, or from a parameter of the function it is in — an
        input of a module's ``forward`` (an activation, in training), or an argument that a call
        site of this file passes with a graph (``tracker.update(loss)``); or a device tensor that
        the step also differentiates, named a loss (``flow_loss`` from a library's renderer, added
        to the loss before ``backward()``): with no graph it would train nothing."""
        value = self.flow.value(expr, site)
        return self._value_holds_graph(value, site) or self._differentiated_tensor(expr, value, site)

    def _differentiated_tensor(self, expr: cst.BaseExpression, value: Value, site: cst.CSTNode) -> bool:
        if not value.device or value.detached or value.kind not in (None, TENSOR):
            return False
        feeding = self.flow.calls.names_feeding_backward(self.scopes.function_of(site) or self.tree.module)
        keeping = set(self.flow.calls.names_keeping_graph(expr))
        # (named a loss: not a target or a mask the loss is computed against, which feeds the
        # backward too but needs no graph)
        return any(name.value in keeping and name.value in feeding and _NAMES_A_LOSS.search(name.value)
                   and (read := self.flow.value(name, site)).device and not read.detached
                   for name in self.tree.descendants(expr, cst.Name))

    def _value_holds_graph(self, value: Value, site: cst.CSTNode) -> bool:
        if value.graph:
            return True
        func = self.scopes.function_of(site)
        if func is None or not value.params:
            return False
        if self._forward_inputs(func) & value.params:
            return True
        return self._graph_at_callers(value, func)

    def _graph_at_callers(self, value: Value, func: cst.FunctionDef, depth: int = 0) -> bool:
        """``value``, made of ``func``'s parameters, holds a graph as the file's calls of ``func``
        fill them in; through callers that hand on their own parameters, two calls up (a hook's
        ``update(probs)`` called by ``masking(logits)``, called with the step's logits)."""
        at_callers = self.flow.at_callers(value, func)
        if at_callers.graph:
            return True
        callers = {caller for site in self.flow.calls.call_sites(func) if (caller := self.scopes.function_of(site))}
        # A helper of ``forward`` (``self._enqueue(embeddings)``) gets the activations it passes.
        return any(self._forward_inputs(caller) & at_callers.params or
                   depth < 2 and at_callers.params and self._graph_at_callers(at_callers, caller, depth + 1)
                   for caller in callers)

    def _forward_inputs(self, func: cst.FunctionDef) -> set[str]:
        """The inputs of a module's ``forward``: activations, in training (not its labels,
        targets, masks or indices, which hold no graph)."""
        if func.name.value != "forward" or not self.scopes.is_per_step_method(func):
            return set()
        return {p.name.value for p in func.params.params[1:] if not _NON_ACTIVATION.search(p.name.value)}

    # -- in-place writes ----------------------------------------------------------------
    @cached_property
    def in_place_writes(self) -> list[InPlaceWrite]:
        """Graph-attached values written in place into a tensor that outlives the step:
        ``self.running_mean.mul_(m).add_((1 - m) * batch_mean)`` in ``forward``,
        ``bank[idx] = emb`` in the training loop. The tensor joins the graph (its ``grad_fn``
        links each step's write to the previous one), so the chain grows like a rebinding's."""
        found = []
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in IN_PLACE_WRITES):
                continue
            target, methods = func.value, {func.attr.value}
            while isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) and \
                    target.func.attr.value in IN_PLACE_WRITES:  # ``buf.mul_(m).add_(v)``: the same tensor
                methods.add(target.func.attr.value)
                target = target.func.value
            skipped = _INDEX_POSITION.get(func.attr.value)  # (``scatter_(1, slots, src)``: integer positions)
            values = [a.value for position, a in enumerate(call.args)
                      if (a.keyword is None and position != skipped) or
                      a.keyword is not None and a.keyword.value not in ("alpha", "value", "index", "indices", "mask")]
            found += self._write(call, target, values, tensor_method=True, reads_old=not methods <= _ADDING_WRITES)
        for assign in self.tree.nodes(cst.Assign):
            for target in assign.targets:
                if isinstance(target.target, cst.Subscript):
                    found += self._write(assign, target.target.value, [assign.value]) or \
                        self._slot_update(assign, target.target)
                elif isinstance(target.target, (cst.Tuple, cst.List)):
                    # ``inputs, self.hidden[i] = self._layer(inputs, self.hidden[i])``: a slot
                    # unpacked from what a call returns, given its own previous value
                    for position, element in enumerate(target.target.elements):
                        if isinstance(element.value, cst.Subscript) and \
                                self._unpacked_graph(assign.value, position, assign):
                            found += self._slot_update(assign, element.value)
        for aug in self.tree.nodes(cst.AugAssign):
            # ``self.shadow[name] -= (1 - decay) * delta`` with ``delta = self.shadow[name] - x``: a
            # moving average kept in a dict, updated in place (a total, ``totals[k] += loss``, is TML001's)
            if isinstance(aug.target, cst.Subscript) and self.stores.reads_own_slot(aug, aug.target):
                found += self._slot_update(aug, aug.target)
        return found

    def _write_kind(self, target: cst.BaseExpression, value: cst.BaseExpression, iteration: Iteration,
                    reads_old: bool) -> str:
        spelled = carried_name(target)
        if reads_old or spelled is None or self.stores.reads(value, spelled):
            return UPDATE
        return STATE if self._read_back(target, spelled, iteration) else ACCUMULATION

    def _read_back(self, target: cst.BaseExpression, spelled: str, iteration: Iteration) -> bool:
        """Whether the written tensor is read again as a tensor: an attribute (``self.bank``)
        anywhere in the file, through any object (``bank.bank`` in the training loop), with grad
        or without (a memory bank, a queue, a cache); a local in the iteration with grad on. A
        running total read only through ``.item()``, or a local buffer of results averaged under
        ``torch.no_grad()`` for a log or returned once the loop ends, is not: it only keeps what
        was written."""
        if "." in spelled:
            attribute = spelled.rpartition(".")[2]
            reads = [n for n in self.tree.nodes(cst.Attribute) if n.attr.value == attribute]
        else:
            reads = self.stores.spelled_in(iteration, spelled)
        for read in reads:
            if self.tree.contains(target, read) or "." not in spelled and self.grad.is_disabled(read):
                continue
            parent = self.tree.parent.get(read)
            while type(parent) in (cst.Element, cst.Tuple, cst.List):  # (``self.a, self.b = a, b``)
                parent = self.tree.parent.get(parent)
            if type(parent) in (cst.AssignTarget, cst.Param) or type(parent) is cst.Attribute and (
                    parent.attr.value in IN_PLACE_WRITES or parent.attr.value in IN_PLACE_FILLS) \
                    or self._read_as_number(read):
                continue  # (written again, reset, or read as a number)
            if type(parent) is cst.Subscript and type(self.tree.parent.get(parent)) is cst.AssignTarget:
                continue
            return True
        return False

    def _read_as_number(self, read: cst.BaseExpression) -> bool:
        """``t.item()``, ``t.mean().item()``, ``t.data``: a chain of tensor methods on ``read`` that
        ends in a value without its graph."""
        node, parent = read, self.tree.parent.get(read)
        while type(parent) is cst.Attribute and parent.value is node:
            if parent.attr.value in _GRAPHLESS_READS:
                return True
            call = self.tree.parent.get(parent)
            node = call if type(call) is cst.Call and call.func is parent else parent
            parent = self.tree.parent.get(node)
        return False

    def graphs_handed_in(self, site: Assignment) -> list[tuple[cst.Call, cst.BaseExpression]]:
        """Where the file's calls hand the graph that ``site`` carries into an object's state: a
        method of a plain class (a meter, a tracker: not a module) that returns nothing and whose
        update reads a parameter (``self.v = (self.v * self.n + x) / (self.n + 1)`` in
        ``Averager.add``), given a value that holds a graph by code outside the class
        (``tl2.add(loss)``): each such call with the argument that brings it. (A method that
        returns what it computes, a REINFORCE baseline's ``update`` returning the advantage, or
        one the class calls itself, keeps the finding at its update.)"""
        method = self.scopes.function_of(site)
        cls = self.scopes.class_of(method) if method is not None else None
        if cls is None or self.scopes.is_torch_module_class(cls) or site.value is None or \
                any(r.value is not None for r in self.scopes.scope_nodes(method, cst.Return)):
            return []
        read = {n.value for n in self.tree.descendants(site.value, cst.Name)}
        handed = []
        for call in self.calls.call_sites(method):
            callee = self.calls.callee(call)
            if callee is None or self.tree.contains(cls, call):
                continue
            handed += [(call, expr) for param, given in self.calls.arguments(call, callee).items() if param in read
                       for expr, where in given if self.flow.value(expr, where).graph]
        return handed

    def _unpacked_graph(self, value: cst.BaseExpression, position: int, site: cst.CSTNode) -> bool:
        """What ``value`` holds at ``position`` once unpacked may hold a graph, its positions known
        (a helper of the file returning a tuple; not a wrapped model's outputs, which may hand an
        input back as it came)."""
        elements = self.flow.value(value, site).elements
        return elements is not None and position < len(elements) and self._value_holds_graph(elements[position], site)

    def _slot_update(self, assign: Union[cst.Assign, cst.AugAssign], slot: cst.Subscript) -> list[InPlaceWrite]:
        """``self.loss_ema[key] = a * self.loss_ema[key] + (1 - a) * value``: an item of an
        outliving container carried from step to step, like a rebound name. A total
        (``totals[k] = totals[k] + loss``, the old value not read again) is TML001's."""
        accumulation = self.stores.accumulation_at(assign) if isinstance(assign, cst.Assign) else None
        if accumulation is not None and not any(
                read.deep_equals(slot) for read in self.tree.descendants(accumulation.value, cst.Subscript)):
            return []
        if self.grad.is_disabled(assign) or not any(
                self._read_attached(read, within) for read, within in self.stores.own_slot_reads(assign, slot)):
            return []  # (``0.1 * loss + 0.9 * ema[k].detach()``: the old value's graph is cut)
        iteration = self.iterations.step_iteration(assign)
        if iteration is None or isinstance(iteration, cst.Lambda) or not self._crosses_step(iteration):
            return []
        if not self.stores.outlives(slot.value, assign, iteration) or not self.holds_graph(assign.value, assign) \
                or self._detached_next(assign, slot.value, iteration) \
                or self._detached_by_a_method_run_per_step(slot.value, assign):
            return []
        return [InPlaceWrite(assign, slot, assign.value, iteration, slot=True)]

    def _write(self, site: cst.CSTNode, target: cst.BaseExpression, values: list,
               tensor_method: bool = False, reads_old: bool = False) -> list[InPlaceWrite]:
        """``tensor_method``: the write is a tensor's own in-place method (``self.buf.lerp_(v, m)``),
        so an attribute of ``self`` or a dict's entry it writes is a tensor even where the flow cannot
        tell (a buffer registered under a computed name, ``W[name].add_(...)`` of a dict a helper filled);
        a parameter's (a cache a helper fills for its caller) and an item assignment's receiver must
        be known to be one (not a list)."""
        if not values or self.grad.is_disabled(site):
            return []
        if isinstance(target, cst.Attribute) and target.attr.value in NON_GRAPH_ATTRIBUTES:
            return []  # ``p.data.add_(...)``: outside autograd
        iteration = self.iterations.step_iteration(site)
        if iteration is None or isinstance(iteration, cst.Lambda) or not self._crosses_step(iteration):
            return []
        kind = self.flow.value(target, site).kind
        if kind is None:  # (a buffer the caller hands in)
            if self._handed_outside_autograd(target, site):
                return []  # ``ema_inplace(self.cluster_size.data, ...)``: the alias dies with the call
            kind = self.flow.kind_handed_in(target, site)
        if kind != TENSOR and not (tensor_method and kind is None and (
                (carried_name(target) or "").startswith("self.") or self._entry_of_a_mapping(target, site))) \
                or not self.stores.outlives(target, site, iteration):
            return []
        if names_a_cache(dotted_name(target)):
            return []  # a key/value cache filled during generation, where no graph is built
        if self._detached_next(site, target, iteration) or self._detached_by_a_method_run_per_step(target, site):
            return []
        carried = [v for v in values if self.holds_graph(v, site)]
        if not carried:
            return []
        kind = self._write_kind(target, carried[0], iteration, reads_old)
        return [InPlaceWrite(site, target, carried[0], iteration, kind=kind)]

    def _entry_of_a_mapping(self, target: cst.BaseExpression, site: cst.CSTNode) -> bool:
        """``W[name]`` where ``W`` is a dict, here or as the callers hand it in (not ``t[i]`` of a
        tensor the flow cannot type: a row of a cache)."""
        if not isinstance(target, cst.Subscript):
            return False
        return MAPPING in (self.flow.value(target.value, site).kind, self.flow.kind_handed_in(target.value, site))

    def _detached_by_a_method_run_per_step(self, target: cst.BaseExpression, site: cst.CSTNode) -> bool:
        """``self.memory[idx] = v`` in a class with another method that detaches the attribute
        (``detach_memory``: ``self.memory.detach_()``, or each item rebound to its ``.detach()``),
        which the file calls in a loop (TGN's ``tgn.memory.detach_memory()`` after each optimizer
        step): the chain is cut every step. ``self.memory.container[node] = v`` is cut by such a
        method of the class of ``self.memory`` that detaches its ``container``."""
        spelled = carried_name(target)
        method = self.scopes.function_of(site)
        cls = self.scopes.class_of(method) if method is not None else None
        if cls is None or spelled is None or not spelled.startswith("self."):
            return False
        holder, attribute = spelled.split(".")[1:-1], spelled.rpartition(".")[2]
        if len(holder) == 1:  # (``self.memory.container``: an attribute of the object in ``self.memory``)
            cls = self.scopes.classes_by_name.get(self.flow.class_attribute(cls, holder[0]).cls or "")
            if cls is None:
                return False
        elif holder:
            return False
        for other in self.scopes.scope_nodes(cls, cst.FunctionDef):
            if other is method or self.scopes.class_of(other) is not cls or not self._detaches_attribute(other, attribute):
                continue
            calls = {*self.flow.calls.call_sites(other), *self.flow.calls.calls_spelled(other.name.value, method=True)}
            if any(self.scopes.loops_around(call) or (caller := self.scopes.function_of(call)) is not None
                   and self.iterations.runs_per_step(caller) for call in calls):
                return True
        return False

    def _detaches_attribute(self, method: cst.FunctionDef, attribute: str) -> bool:
        """``method`` detaches ``self.<attribute>`` in place, or rebinds it or each of its items
        to a ``.detach()`` (``self.container[node] = self.container[node].detach()``)."""
        return f"{first_param(method)}.{attribute}" in self._detached_in_place(method) or \
            attribute in self._attributes_rebound_detached(method)

    def _handed_outside_autograd(self, target: cst.BaseExpression, site: cst.CSTNode) -> bool:
        """``target`` is a parameter that some caller fills with ``buf.data``: an alias without
        autograd history, which a write with a graph-attached value gives one only until the call
        returns (the buffer itself stays out of the graph)."""
        param = self.scopes.sole_parameter(target.value, self.scopes.function_of(site)) \
            if isinstance(target, cst.Name) else None
        return param is not None and any(isinstance(passed, cst.Attribute) and passed.attr.value in NON_GRAPH_ATTRIBUTES
                   for passed, _ in self.calls.passed_to(param))

    def _detached_next(self, site: cst.CSTNode, target: cst.BaseExpression, iteration: Iteration) -> bool:
        """A later statement of the step cuts the tensor from the graph the write joined it to:
        ``t = t.detach()`` or ``t.detach_()`` after the write in its own block (ray's moving
        average: ``add_`` then rebinding the attribute to its detached value), or after the
        inner loop holding it (per-class prototypes written in a loop over the batch's labels,
        then ``self.prototypes.detach_()``), within the iteration."""
        spelled = carried_name(target)
        if spelled is None:
            return False
        child: cst.CSTNode = self.tree.statement_of(site)
        for block in self.tree.ancestors(child):
            if block is iteration or isinstance(block, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(block, (cst.IndentedBlock, cst.Module)):
                lines = block.body
                here = next((i for i, line in enumerate(lines) if line is child or self.tree.contains(line, child)), None)
                if here is not None and any(self._detaches_line(line, spelled) for line in lines[here + 1:]):
                    return True
                if self.tree.parent.get(block) is iteration:
                    return False
            child = block
        return False

    @staticmethod
    def _detaches_line(line: cst.CSTNode, spelled: str) -> bool:
        if not isinstance(line, cst.SimpleStatementLine):
            return False
        for small in line.body:
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value in ("detach", "detach_") and carried_name(value.func.value) == spelled):
                continue
            if value.func.attr.value == "detach_" or isinstance(small, cst.Assign) and any(
                    carried_name(t.target) == spelled for t in small.targets):
                return True
        return False

    @cached_property
    def _accumulations(self) -> dict[cst.CSTNode, cst.BaseExpression]:
        return {a.node: a.value for a in self.stores.accumulations()}

    def _kind(self, site: Assignment, name: str, region: Iteration) -> str:
        if any(j.site is site for j in self.stores.join_accumulations):
            return JOIN
        if isinstance(site, cst.AugAssign):
            # (in place on a tensor: TML015's when it is a leaf that requires grad). A running
            # statistic on ``self`` whose step reads the old value (``self.sums += m * (s -
            # self.sums)``) updates it, as its spelled-out form below does.
            return UPDATE if "." in name and next(self._graph_reads(site.value, name, region, site, 0), None) is not None \
                else ACCUMULATION
        if self._differentiated_with_respect_to(name, region):
            return UPDATE  # ``x = x + step`` of the variable ``torch.autograd.grad(loss, x)`` optimizes
        added = self._accumulations.get(site)
        if added is not None and self.holds_graph(added, site) and (
                "." not in name and not self._samples(region)
                or next(self._graph_reads(added, name, region, site, 0), None) is None):
            # (a running statistic on ``self`` whose step reads the old value, ``self.mean = self.mean +
            # (x - self.mean) * k``, updates it, as a sampler's ``x = x + d * dt`` with ``d`` computed
            # from ``x`` does; a local's ``z = z + f(z)`` inside one forward stays a total)
            return ACCUMULATION
        value = site.value
        return UPDATE if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)) else STATE

    def _samples(self, region: Iteration) -> bool:
        """A loop of generation or evaluation code that runs a model each iteration and trains
        nothing (an Euler sampler outside any model): what it carries is never differentiated. A
        model's own sampler (``FlowHead.sample_latent``, or a helper only its methods call) may
        be, by whoever calls it."""
        known = self._sampling.get(region)
        if known is None:
            function = self.scopes.function_of(region)
            sites = self.flow.calls.call_sites(function) if function is not None else []
            known = self._sampling[region] = isinstance(region, (cst.For, cst.While)) and \
                not self.scopes.in_model_method(region) and \
                not (sites and all(self.scopes.in_model_method(site) for site in sites)) and \
                not self.iterations.runs_step(region) and \
                not self.iterations.trains_through_calls(region) and self._runs_model_per_step(region)
        return known

    def _perturbation_step(self, site: Assignment) -> bool:
        """An attack's step: a gradient's sign (FGSM, PGD) or a projection back into the data's
        range (``.clamp(0, 1)``), never part of an optimizer's unrolled update."""
        value = getattr(site, "value", None)
        if value is None:
            return False
        calls = self.tree.descendants(value, cst.Call)
        if isinstance(value, cst.Call) and (callee := self.flow.calls.callee(value)) is not None and \
                isinstance(callee.function, cst.FunctionDef):  # (``x_adv = attack_step(model, x_adv, y)``)
            calls = [*calls, *self.scopes.scope_nodes(callee.function, cst.Call)]
        return any((terminal_name(call.func) or "") in _PERTURBATION_CALLS for call in calls)

    def _differentiated_with_respect_to(self, name: str, region: Iteration) -> bool:
        """``name`` is among the inputs of a ``torch.autograd.grad`` in the iteration: a variable
        being optimized (an optimizee, an adversarial input), not a running total."""
        return any(name in self.flow.differentiated_inputs(call) for call in self.iterations.step_calls(region))


# In-place writes that add to the tensor or overwrite part of it: the written value alone
# decides what it holds (``total.add_(loss)``, ``bank.index_copy_(0, idx, emb)``), unlike
# ``lerp_`` or ``mul_(m).add_(v)``, which blend in the old value.
_ADDING_WRITES = frozenset({
    "add_", "sub_", "copy_", "index_add_", "index_copy_", "index_put_", "masked_scatter_", "scatter_",
    "scatter_add_", "put_",
})
# Reads of a tensor that take no graph along: a number (``.item()``), a detached copy, ``.data``.
_GRAPHLESS_READS = GRAPH_BREAKING_METHODS | DETACHED_TENSOR_ATTRIBUTES
_PERTURBATION_CALLS = frozenset({"sign", "clamp", "clamp_", "clip"})

# Methods that return the tensor itself when it already is on that device or of that type.
_SELF_MOVES = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "contiguous", "type_as"})


def _resets_or_keeps(site: Assignment, name: str) -> bool:
    """``hx = torch.zeros(1, 256) if done else hx``: a fresh value on one path (an episode's end),
    the old one with its graph on the other; not ``h = h.detach() if t % k == 0 else h``, which
    cuts the chain every ``k`` steps."""
    value = getattr(site, "value", None)
    if not isinstance(value, cst.IfExp):
        return False
    arms = (value.body, value.orelse)
    kept = [arm for arm in arms if carried_name(arm) == name]
    return len(kept) == 1 and not any(
        carried_name(node) == name for arm in arms if arm is not kept[0] for node in _names_and_attributes(arm))


def _moves_itself(site: Assignment, name: str) -> bool:
    """``memory = memory.to(device)``: after the first iteration the same tensor comes back, with
    no new node in its graph."""
    value = getattr(site, "value", None)
    return isinstance(site, cst.Assign) and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
        and value.func.attr.value in _SELF_MOVES and carried_name(value.func.value) == name


# A name for a loss term: ``loss``, ``flow_loss``, ``loss_kl``.
_NAMES_A_LOSS = re.compile(r"(?:^|_)loss(?:_|$)", re.IGNORECASE)
# A flag an environment returns when its episode ends (``obs, reward, done, info = env.step(a)``).
_EPISODE_END = re.compile(r"(^|_)(done|dones|terminal|terminals|terminated|is_terminal)$")


def _counts(loop: Loop) -> bool:
    """``while ...:`` or ``for i in range(n)``: a loop that counts steps, not one over items
    (also ``reversed(range(T))`` and a sampler's ``scheduler.timesteps``, through ``tqdm`` or
    ``enumerate``)."""
    if isinstance(loop, cst.While):
        return True
    iterable = loop.iter
    while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("tqdm", "tqdm.tqdm", "enumerate", "reversed",
                                                                          "list") and iterable.args:
        iterable = iterable.args[0].value
    if isinstance(iterable, (cst.Name, cst.Attribute)):
        return (terminal_name(iterable) or "").lower().endswith("timesteps")
    return isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("range", "itertools.count", "count")


def _is_true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


# Inputs of a ``forward`` that are data about the batch (labels, masks, token ids), not activations.
# In-place writes whose argument at this position says where to write (indices, a mask), not what.
_INDEX_POSITION = {"index_add_": 1, "index_copy_": 1, "scatter_": 1, "scatter_add_": 1, "index_put_": 0,
                   "masked_scatter_": 0, "put_": 0}
_NON_ACTIVATION = re.compile(r"label|target|mask|index|indices|idx|ids?$|tokens?$|^y$|^t$|step|position",
                             re.IGNORECASE)


def _target_names(loop: Union[cst.For, cst.While]) -> set[str]:
    if not isinstance(loop, cst.For):
        return set()
    return {n.value for n in _names_and_attributes(loop.target) if isinstance(n, cst.Name)}


def _names_and_attributes(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Name, cst.Attribute)):
            found.append(node)
        stack.extend(node.children)
    return found


def _copies_attribute(assign: cst.Assign, attribute: str) -> bool:
    """``holder.x = other.x``: the value of an attribute of that name, as it is."""
    return isinstance(assign.value, cst.Attribute) and assign.value.attr.value == attribute
