"""Hook registrations, and whether one piles up: the same persistent module or parameter gets a
new hook on every iteration and nothing removes it.

*Persistent across an iteration*: rooted at ``self``, at a name bound outside the iteration, or
at the loop variable of ``for m in model.modules()`` / ``.parameters()`` / ``.children()`` (and the
``named_*`` forms) over something persistent — the same objects again on every iteration. A
tensor created in the iteration (``out.register_hook(f)``) dies with it, and so do its hooks.
*Removed*: the handle is kept (a name, a ``self`` attribute, a container) and a ``.remove()``
runs in the iteration, in a function it calls, or (for a per-step method) elsewhere in the class;
or the handle is used as a context manager."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.iterations import Iteration, Iterations
from torchmemlint.semantics.scopes import Loop, Scopes, first_param, parameter_names, terminal_name, tests_every_n_steps
from torchmemlint.semantics.tree import Tree
from torchmemlint.semantics.vocabulary import HOOK_REGISTRATIONS

GLOBAL_HOOK_PREFIX = "torch.nn.modules.module.register_module_"
_MAX_CALL_DEPTH = 4
_MEMBER_ITERATORS = frozenset({
    "modules", "parameters", "children", "named_modules", "named_parameters", "named_children", "buffers",
})


@dataclass(frozen=True)
class Pile:
    """A registration that runs again on every iteration of ``iteration``: directly, or through
    the calls from ``at`` (a statement of that iteration: ``GradCAM(model, layer)`` whose
    ``__init__`` registers, ``explainer.saliency(image)`` whose helper does)."""

    iteration: Iteration
    at: cst.CSTNode
    constructs: Optional[str] = None  # the class built at ``at`` whose construction registers


@dataclass(frozen=True)
class HookRegistration:
    call: cst.Call
    receiver: Optional[cst.BaseExpression]  # None for the global ``register_module_*`` hooks
    method: str


class Hooks:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes, iterations: Iterations) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.iterations = iterations
        # (region, depth) -> whether it removes hooks within the calls left: each function is
        # read once per depth, not once per path of calls that reaches it
        self._removals: dict[tuple[cst.CSTNode, int], bool] = {}

    @cached_property
    def registrations(self) -> list[HookRegistration]:
        found = []
        for call in self.tree.nodes(cst.Call):
            func = call.func
            qualified = self.imports.qualify(func) or ""
            if qualified.startswith(GLOBAL_HOOK_PREFIX):
                found.append(HookRegistration(call, None, qualified.rsplit(".", 1)[1]))
            elif isinstance(func, cst.Attribute) and func.attr.value in HOOK_REGISTRATIONS and not qualified \
                    and not self._runs_own_method(call):
                found.append(HookRegistration(call, func.value, func.attr.value))
        return found

    def _runs_own_method(self, call: cst.Call) -> bool:
        """``self.register_hook(name)`` of an extractor class of the file: its own method (whose
        body registers, and is checked there), not torch's."""
        callee = self.iterations.calls.callee(call)
        return callee is not None and isinstance(callee.function, cst.FunctionDef) and not callee.guessed

    def piles_up(self, registration: HookRegistration) -> Optional[Pile]:
        """Where ``registration`` adds one more hook to the same object on every iteration,
        never removed: an enclosing step loop or per-step method, or a loop that calls (through
        a helper, a method, an object's construction) the function that registers; None when it
        does not."""
        for iteration in self._iterations_around(registration.call):
            if self._guarded(registration.call, iteration):
                return None
            if registration.receiver is not None and not self.persists_across(registration.receiver, iteration):
                continue
            if self._removed(registration.call, iteration):
                return None
            return Pile(iteration, registration.call)
        func = self.scopes.function_of(registration.call)
        if func is None or self.scopes.is_per_step_method(func) or self._guarded(registration.call, func) \
                or self._removed(registration.call, func, by_other_methods=False) \
                or isinstance(self.tree.parent.get(registration.call), cst.Return):
            # (another method of the class that removes the handles, ``clear()``, counts only where
            # the loop that repeats the registration runs it: ``_through_callers`` asks that loop)
            return None
        return self._through_callers(func, registration.receiver, None, 0,
                                     self._picking_parameters(registration.call, func)
                                     | self._picks_through_helper(registration.receiver, func),
                                     self._configuring_parameters(registration.call, func))

    def _through_callers(self, func: cst.FunctionDef, receiver: Optional[cst.BaseExpression],
                         constructs: Optional[str], depth: int, picking: frozenset[str] = frozenset(),
                         configuring: frozenset[str] = frozenset()) -> Optional[Pile]:
        """A loop around a call of ``func`` (or of a function calling it) that passes the same
        persistent object on every iteration: ``receiver`` is spelled as ``func`` sees it (and
        ``picking``, the parameters that choose which of its members, stays the same; so does
        ``configuring``, those the hook itself reads, unless the loop repeats steps)."""
        if depth >= _MAX_CALL_DEPTH:
            return None
        calls = self.iterations.calls
        for site in self._sites(func):
            callee = calls.callee(site)
            if callee is None:
                continue
            built = callee.constructs.name.value if callee.constructs is not None else constructs
            mapped = self._as_seen_by_caller(receiver, func, site, callee) if receiver is not None else None
            if receiver is not None and mapped is None:
                continue
            caller = self.scopes.function_of(site)
            in_setup = caller is not None and caller.name.value == "__init__"  # a loop over what to set up
            for loop in [] if in_setup else self.scopes.loops_around(site):
                if self._guarded(site, loop):
                    break
                if mapped is not None and not self.persists_across(mapped, loop):
                    continue
                if picking and self._varies_pick(site, func, picking, loop):
                    continue
                if configuring and not self._repeats_steps(loop) and self._varies_pick(site, func, configuring, loop):
                    continue  # a setup loop over what to capture: a different hook each time
                if self._removes_in(loop.body):
                    break
                return Pile(loop, site, built)
            if caller is not None and caller is not func and not self._removes_in(caller):
                # (a caller that removes the hooks, ``layer.detach_hook()`` after the example
                # forward, leaves none behind on each of its own calls)
                found = self._through_callers(caller, mapped, built, depth + 1)
                if found is not None:
                    return found
        return None

    def _sites(self, func: cst.FunctionDef) -> list[cst.Call]:
        """Calls of ``func``; for an ``__init__``, the constructions of its class."""
        sites = list(self.iterations.calls.call_sites(func))
        cls = self.scopes.class_of(func)
        if func.name.value == "__init__" and cls is not None:
            sites += self.iterations.calls.constructions(cls)
        return sites

    def _as_seen_by_caller(self, receiver: cst.BaseExpression, func: cst.FunctionDef, site: cst.Call,
                           callee) -> Optional[cst.BaseExpression]:
        """The caller's expression for the object ``receiver`` is hooked on (its persistent
        base): the argument passed for a parameter, the object a method is called on, the
        argument an ``__init__`` stored on ``self``; None for an object made in ``func``."""
        base = _navigated_from(receiver)
        if isinstance(base, cst.Call) and (member := self._member_returned(base)) is not None:
            # ``conv_layers(model)[layer_num]``: one of the members a helper lists
            return self._as_seen_by_caller(member, func, site, callee)
        if not isinstance(base, cst.Name):
            return None
        name = base.value
        params = parameter_names(func)
        own_self = first_param(func) if self.scopes.class_of(func) is not None else None
        if name == own_self:
            if callee.constructs is not None or func.name.value == "__init__":
                stored = self._stored_parameter(func, receiver, own_self)
                if stored is None:
                    return None
                given = self.iterations.calls.arguments(site, callee).get(stored, ())
                return given[0][0] if given else None
            if isinstance(site.func, cst.Attribute):
                return site.func.value if dotted_name(site.func.value) != "self" else receiver
            return None
        if name in params:
            given = self.iterations.calls.arguments(site, callee).get(name, ())
            return given[0][0] if given else None
        comprehension = next((a.for_in for a in self.tree.ancestors(base)
                              if isinstance(a, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp))
                              and name in _target_names(a.for_in.target)), None)
        if comprehension is not None:  # ``[Recorder(m) for m in self.model.modules()]``
            node, value = comprehension, None
        else:
            bindings = self.scopes.bindings(func).get(name, [])
            if len(bindings) > 1:  # ``layer = model``, then ``layer = dict(layer.named_children())[part]``
                bindings = [b for b in bindings if not _walks_down(b.value, name)]
            if len(bindings) != 1:
                return None
            node, value = bindings[0].node, bindings[0].value
        if isinstance(node, (cst.For, cst.CompFor)):  # ``for module in self.model.modules()`` / ``in self.model.features``
            iterable = node.iter
            if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and \
                    iterable.func.attr.value in _MEMBER_ITERATORS:
                iterable = iterable.func.value
            if isinstance(iterable, (cst.Attribute, cst.Name)):
                return self._as_seen_by_caller(iterable, func, site, callee)
            if isinstance(iterable, cst.Call) and (member := self._member_returned(iterable)) is not None:
                return self._as_seen_by_caller(member, func, site, callee)  # ``for name, module in self._layers()``
        elif isinstance(value, (cst.Attribute, cst.Subscript, cst.Name)) or _member_owner(value) is not None:
            # ``layer = self.model.features[0]``, ``modules = dict(self.encoder.named_modules())``
            return self._as_seen_by_caller(value, func, site, callee)
        elif isinstance(value, cst.Call) and (member := self._member_returned(value)) is not None:
            # ``layer = find_layer(self.model, "layer4")``, a helper that walks down its argument
            return self._as_seen_by_caller(member, func, site, callee)
        elif isinstance(value, cst.IfExp) and (unwrapped := _unwrapped(value)) is not None:
            # ``module.module if isinstance(module, DistributedDataParallel) else module``
            return self._as_seen_by_caller(unwrapped, func, site, callee)
        return None

    def _member_returned(self, call: cst.Call, iteration: Optional[Iteration] = None,
                         depth: int = 0) -> Optional[cst.BaseExpression]:
        """The argument whose member a helper of the file returns (``find_layer(model, "layer4")``
        whose every ``return`` reads down from its ``model`` parameter), or None; only with
        constant other arguments, so that the member is the same one at every call (or, given the
        ``iteration`` the call is in, arguments that pick the same members on each of its passes:
        ``for i in layer_ids: get_block(model, i)``)."""
        helper = self.iterations.calls.callee(call)
        function = helper.function if helper is not None and helper.constructs is None else None
        if not isinstance(function, cst.FunctionDef):
            return None
        parameters: set[str] = set()
        for returned in self.scopes.scope_nodes(function, cst.Return):
            base = _navigated_from(returned.value) if returned.value is not None else None
            if isinstance(base, (cst.ListComp, cst.GeneratorExp)):  # ``[m for m in model.children() if ...][k]``
                base = _navigated_from(base.for_in.iter)
            while isinstance(base, cst.Name) and base.value not in parameters:
                bindings = [b for b in self.scopes.bindings(function).get(base.value, [])
                            if not _walks_down(b.value, base.value)]  # (``target = target._modules[h]``)
                if len(bindings) != 1 or bindings[0].value is None or isinstance(bindings[0].node, cst.Param):
                    break
                base = _navigated_from(bindings[0].value)
            if not isinstance(base, cst.Name):
                return None
            parameters.add(base.value)
        if len(parameters) != 1:
            return None
        arguments = self.iterations.calls.arguments(call, helper)
        walked = parameters.pop()
        if self.scopes.class_of(function) is not None and walked == first_param(function) and \
                isinstance(call.func, cst.Attribute):
            given = ((call.func.value, None),)  # ``self._layers()`` listing members of ``self._model``: the object
        else:
            given = arguments.pop(walked, ())
        caller = self.scopes.function_of(call)
        if any(not isinstance(expr, (cst.SimpleString, cst.Integer)) and not self._caller_parameter(expr, caller)
               and not (iteration is not None and isinstance(expr, cst.Name) and self._same_keys_each_time(expr, iteration, depth))
               for other in arguments.values() for expr, _ in other):
            return None  # ``get_layer(model, name)``: which member may change with ``name`` (one hook per layer)
        # (a pick the caller is handed, ``find_layer(self.model, layer_name)`` in ``__init__``:
        # ``_picking_parameters`` names it, and whether it changes is asked of the callers' loops)
        return given[0][0] if given else None

    def _caller_parameter(self, expr: cst.BaseExpression, func: Optional[cst.FunctionDef]) -> bool:
        return isinstance(expr, cst.Name) and func is not None and expr.value in parameter_names(func)

    def _picks_through_helper(self, receiver: Optional[cst.BaseExpression], func: cst.FunctionDef) -> set[str]:
        """The parameters of ``func`` that choose which member a helper returns for ``receiver``
        (``layer_name`` of ``target = find_layer(self.model, layer_name)``)."""
        base = _navigated_from(receiver) if receiver is not None else None
        if isinstance(base, cst.Name):
            bindings = self.scopes.bindings(func).get(base.value, [])
            base = bindings[0].value if len(bindings) == 1 else None
        member = self._member_returned(base) if isinstance(base, cst.Call) else None
        if member is None:
            return set()
        return {arg.value.value for arg in base.args if self._caller_parameter(arg.value, func)} - \
            {name.value for name in self.tree.descendants(member, cst.Name)}

    def _stored_parameter(self, func: cst.FunctionDef, receiver: cst.BaseExpression, own_self: str) -> Optional[str]:
        """The ``__init__`` parameter that ``self.<first attribute of receiver>`` was set from
        (``self.model = model``), following a helper method ``__init__`` hands it to."""
        first = receiver
        while not (isinstance(first, cst.Attribute) and dotted_name(first.value) == own_self):
            if isinstance(first, (cst.Attribute, cst.Subscript)):
                first = first.value
            elif (owner := _member_owner(first)) is not None:
                first = owner
            else:
                break
        if not isinstance(first, cst.Attribute):
            return None
        cls = self.scopes.class_of(func)
        init = self.iterations.calls.method_of(cls, "__init__") if cls is not None else None
        if init is None:
            return None
        return self.scopes.stored_parameters(init).get(first.attr.value)

    def _iterations_around(self, node: cst.CSTNode) -> list[Iteration]:
        """Enclosing loops that repeat steps (a backward, an optimizer step, a forward, a
        loader, or a ``while``), innermost first, then the per-step method."""
        iterations: list[Iteration] = [loop for loop in self.scopes.loops_around(node) if self._repeats_steps(loop)]
        func = self.scopes.function_of(node)
        if func is not None and (self.iterations.runs_per_step(func) or self._called_repeatedly(func)
                                 and not self._picking_parameters(node, func)) and not self._only_called_guarded(func):
            iterations.append(func)
        return iterations

    def _only_called_guarded(self, func: cst.FunctionDef) -> bool:
        """Every call of the registering helper is itself registered-once guarded (``if not
        self.hook_registered: self._register_hook()``, BYOL's lazy registration)."""
        sites = self.iterations.calls.call_sites(func)
        return bool(sites) and all(
            (caller := self.scopes.function_of(site)) is not None and self._guarded(site, caller) for site in sites)

    def _repeats_steps(self, loop: Loop) -> bool:
        """A loop that repeats steps: a backward, an optimizer step, a forward, a loader, or a
        ``while``."""
        return isinstance(loop, cst.While) or self.iterations.runs_step(loop) or self.iterations.is_batch_loop(loop) \
            or self.iterations.trains_through_calls(loop) \
            or self.iterations.forwards_through_calls(loop)  # (``net.predict(image)`` per image)

    def _configuring_parameters(self, call: cst.Call, func: cst.FunctionDef) -> frozenset[str]:
        """The parameters of ``func`` that the hook it registers reads (a closure defined in
        ``func``, or the hook expression itself): a caller looping over them outside any step
        (``for key, spec in capture_tasks: install_hook(module, key, spec.index)``) registers a
        different hook on each pass, once."""
        if not call.args:
            return frozenset()
        hook = call.args[0].value
        params = parameter_names(func)
        read = {n.value for n in self.tree.descendants(hook, cst.Name)}
        if isinstance(hook, cst.Name):
            for inner in self.scopes.functions_by_name.get(hook.value, ()):
                if self.scopes.function_of(inner) is func:  # (its own parameters shadow ``func``'s)
                    read |= {n.value for n in self.tree.descendants(inner.body, cst.Name)} - parameter_names(inner)
        return frozenset(read & params)

    def _picking_parameters(self, call: cst.CSTNode, func: cst.FunctionDef) -> frozenset[str]:
        """The parameters of ``func`` that pick the member ``call`` registers on (``for name, m
        in model.named_modules(): if name == selected_layer:``): a caller that varies them (a setup
        loop over layer names) registers once on each member, not again on the same one."""
        params = {p.name.value for p in func.params.params}
        for ancestor in self.tree.ancestors(call):
            if ancestor is func:
                break
            if isinstance(ancestor, cst.If) and self.tree.contains(ancestor.body, call):
                selecting = self._member_names_around(ancestor)
                for comparison in self.tree.descendants(ancestor.test, cst.Comparison):
                    sides = {comparison.left, *(c.comparator for c in comparison.comparisons)}
                    names = {side.value for side in sides if isinstance(side, cst.Name)}
                    if names & selecting:
                        return frozenset(names & params)
        return frozenset()

    def _varies_pick(self, site: cst.Call, func: cst.FunctionDef, picking: frozenset[str], loop: Loop) -> bool:
        """The argument ``site`` passes for a picking parameter of ``func`` changes with ``loop``
        (``for layer_name in self.layer_list: self.hook_layer(model, layer_name)``)."""
        callee = self.iterations.calls.callee(site)
        arguments = self.iterations.calls.arguments(site, callee) if callee is not None else {}
        return any(self._bound_in(n.value, loop) and not self._same_picks_each_pass(n.value, loop)
                   for param in picking for value, _ in arguments.get(param, ())
                   for n in self.tree.descendants(value, cst.Name))

    def _same_picks_each_pass(self, name: str, loop: Loop) -> bool:
        """``name`` is bound in ``loop`` only as the target of inner loops over a collection that
        ``loop`` does not rebind (``for layer in layers:`` inside ``for image in images:``): each
        pass of ``loop`` picks the same members again, so a hook per pick piles up per pass."""
        inner = [b.node for b in self.scopes.bindings(self.scopes.scope_of(loop)).get(name, [])
                 if self.tree.contains(loop.body, b.node)]
        return bool(inner) and all(
            isinstance(node, cst.For) and name in _target_names(node.target) and not any(
                self._bound_in(n.value, loop) for n in self.tree.descendants(node.iter, cst.Name))
            for node in inner)

    def _called_repeatedly(self, method: cst.FunctionDef) -> bool:
        """A method of a class of this file that the file calls again and again on one object:
        ``cam.generate(image)`` in a loop or comprehension over images, ``cam`` built from the
        class before it."""
        cls = self.scopes.class_of(method)
        name = method.name.value
        if cls is None or name == "__init__":
            return False
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == name and isinstance(func.value, cst.Name)):
                continue
            if cls.name.value not in self.scopes.classes_built_into(func.value, call):
                continue
            receiver = func.value.value
            repeats = self.scopes.loops_around(call, comprehensions=True)
            if any(not self._rebinds(repeat, receiver) for repeat in repeats):
                return True
        return False

    def _rebinds(self, repeat: cst.CSTNode, name: str) -> bool:
        """Whether each iteration of a loop or comprehension may bind ``name`` anew."""
        if isinstance(repeat, (cst.For, cst.While)) and self.scopes.is_bound_in(name, repeat.body, plain_only=False):
            return True
        return name in _names_bound_by(repeat)


    # -- persistence -------------------------------------------------------------------
    def persists_across(self, expr: cst.BaseExpression, iteration: Iteration, depth: int = 0) -> bool:
        """``expr`` is the same object on every iteration of ``iteration``."""
        if depth > 6:
            return False
        depth += 1
        if isinstance(expr, cst.Attribute):
            return self.persists_across(expr.value, iteration, depth)
        if isinstance(expr, cst.Subscript):
            varying = any(n.value != "self" and self._bound_in(n.value, iteration) and not self.tree.is_attribute_name(n)
                          and not self._same_keys_each_time(n, iteration, depth)
                          for n in self.tree.descendants(expr.slice[0], cst.Name)) if expr.slice else False
            listed = expr.value
            if isinstance(listed, cst.List) and len(listed.elements) == 1 and isinstance(listed.elements[0], cst.StarredElement):
                listed = listed.elements[0].value  # ``[*self.net.children()][self.layer]``
            if isinstance(listed, cst.Name) and (built := self._built_from_call(listed, iteration)) is not None:
                listed = built  # ``modules = dict(self.teacher.named_modules())``, then ``modules[name]``
            if isinstance(listed, cst.Call) and not varying:  # ``list(model.children())[-2]``: a member
                return self._members_of_persistent(listed, iteration, depth)
            return not varying and self.persists_across(expr.value, iteration, depth)
        if isinstance(expr, cst.Call):  # ``get_block(self.student, i)``: a member a helper picks
            member = self._member_returned(expr, iteration, depth)
            return member is not None and self.persists_across(member, iteration, depth)
        if not isinstance(expr, cst.Name):
            return False
        if expr.value == "self":
            return True
        if isinstance(iteration, cst.For) and expr.value in _target_names(iteration.target):
            return False  # the loop's own variable: another object on every iteration
        if not self._bound_in(expr.value, iteration):
            return True  # bound before the loop, or a global of the method
        for binding in self.scopes.reaching_bindings(expr.value, expr):
            node = binding.node
            if not self.tree.contains(iteration.body, node):
                if isinstance(iteration, cst.FunctionDef):
                    # A parameter: the same object on every call when a caller passes one that
                    # persists across the caller's own step loop (``attach(model)`` per batch).
                    return isinstance(node, cst.Param) and depth < 4 and \
                        self._passed_persistent(iteration, node.name.value, depth)
                continue
            if isinstance(node, cst.For):  # ``for m in model.modules():``
                if not self._members_of_persistent(node.iter, iteration, depth, _position(node.target, expr.value)):
                    return False
            elif binding.value is None or not isinstance(binding.value, (cst.Name, cst.Attribute, cst.Subscript)) or \
                    not self.persists_across(binding.value, iteration, depth):
                return False
        return True

    def _same_keys_each_time(self, name: cst.Name, iteration: Iteration, depth: int) -> bool:
        """``name`` is bound in ``iteration`` only by an inner loop over the same persistent
        sequence (``for item in self.distill_cfg``): every iteration picks the same members."""
        bindings = self.scopes.reaching_bindings(name.value, name)
        return bool(bindings) and all(
            isinstance(b.node, cst.For) and b.node is not iteration and self.tree.contains(iteration, b.node)
            and self._members_of_persistent(b.node.iter, iteration, depth) for b in bindings)

    def _built_from_call(self, name: cst.Name, iteration: Iteration) -> Optional[cst.Call]:
        """The one call ``name`` is bound to in ``iteration``, if that is its only binding."""
        bindings = self.scopes.reaching_bindings(name.value, name)
        if len(bindings) == 1 and isinstance(bindings[0].value, cst.Call) and bindings[0].index is None \
                and self.tree.contains(iteration, bindings[0].node):
            return bindings[0].value
        return None

    def _passed_persistent(self, function: cst.FunctionDef, param: str, depth: int) -> bool:
        if self.scopes.is_per_step_method(function):
            return False  # the framework passes a new batch on every call
        for site in self.iterations.calls.call_sites(function):
            callee = self.iterations.calls.callee(site)
            given = self.iterations.calls.arguments(site, callee).get(param, ()) if callee is not None else ()
            outer = self.iterations.step_iteration(site)
            if outer is not None and any(self.persists_across(argument, outer, depth + 1) for argument, _ in given):
                return True
        return False

    def _members_of_persistent(self, iterable: cst.BaseExpression, iteration: Iteration, depth: int,
                               position: Optional[int] = None) -> bool:
        """Every element ``for`` gets from ``iterable`` (its item at ``position``, for a target
        that unpacks) is the same object on every iteration of ``iteration``."""
        if isinstance(iterable, (cst.Tuple, cst.List)) and iterable.elements:
            # ``for model, tap in ((self.teacher, t_tap), (self.student, s_tap))``: the models
            items = [e.value for e in iterable.elements]
            if position is not None:
                items = [i.elements[position].value if isinstance(i, (cst.Tuple, cst.List)) and
                         len(i.elements) > position else None for i in items]
            return all(i is not None and self.persists_across(i, iteration, depth) for i in items)
        while isinstance(iterable, cst.Call) and dotted_name(iterable.func) in ("enumerate", "list", "reversed", "dict") \
                and iterable.args:
            iterable = iterable.args[0].value
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args and \
                iterable.func.attr.value in ("items", "values"):
            iterable = iterable.func.value  # ``self.model.features._modules.items()``: the modules of a dict
        if isinstance(iterable, cst.Call) and dotted_name(iterable.func) == "zip" and iterable.args:
            # ``for s, t in zip(self.student.layers, self.teacher.layers)``
            return all(self._members_of_persistent(a.value, iteration, depth) for a in iterable.args)
        if (dotted_name(iterable) or "").startswith("self."):
            return True  # ``for layer in self.base.layers``: the submodules of the module itself
        if isinstance(iterable, (cst.Name, cst.Attribute)):
            # ``convs = [m for m in model.modules() ...]`` before the loop; ``model.encoder``: the
            # blocks of a persistent model's container
            return self.persists_across(iterable, iteration, depth)
        if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and
                iterable.func.attr.value in _MEMBER_ITERATORS):
            return False
        return self.persists_across(iterable.func.value, iteration, depth)

    def _bound_in(self, name: str, iteration: Iteration) -> bool:
        if isinstance(iteration, cst.FunctionDef):
            return bool(self.scopes.bindings(iteration).get(name))
        if isinstance(iteration, cst.For) and name in _target_names(iteration.target):
            return True
        return self.scopes.is_bound_in(name, iteration.body, plain_only=False)

    # -- removal and guards --------------------------------------------------------------
    def _removed(self, call: cst.Call, iteration: Iteration, by_other_methods: bool = True) -> bool:
        parent = self.tree.parent.get(call)
        if isinstance(parent, cst.WithItem):
            return True
        if isinstance(parent, cst.Expr):
            return False  # the handle is thrown away: nothing can remove the hook
        if isinstance(iteration, cst.FunctionDef) and (
                isinstance(parent, cst.Return) or self._kept_in_returned(call, iteration)):
            # The caller gets the handle (``return h``, or ``handles[name] = [h, ...]`` then ``return
            # handles``): removed where every caller keeps it and removes one (itself or in a function
            # it calls: ``self.update_criterion(..., handles)``).
            sites = self.iterations.calls.call_sites(iteration)
            return bool(sites) and all(
                not isinstance(self.tree.parent.get(site), cst.Expr)
                and self._removes_in(self.scopes.function_of(site) or self.tree.module) for site in sites)
        region: cst.CSTNode = iteration if isinstance(iteration, cst.FunctionDef) else iteration.body
        cls = self.scopes.class_of(iteration) if isinstance(iteration, cst.FunctionDef) else None
        if cls is None:
            return self._removes_in(region)
        # In a class: a method that removes the handles counts where something runs it (a call
        # in the file, ``with`` or the garbage collector), not where it is only defined.
        return any(self._removes_in(method) for method in self.tree.descendants(cls, cst.FunctionDef)
                   if method is iteration or method.name.value in _IMPLICITLY_CALLED
                   or by_other_methods and (self.iterations.calls.call_sites(method) or self._called_by_name(method)))

    def _kept_in_returned(self, call: cst.Call, function: cst.FunctionDef) -> bool:
        """The handle ``call`` gives is put into a container the function returns: ``handles[name]
        = [h1, h2]``, ``handles.append(h)``, then ``return handles``."""
        node, parent = call, self.tree.parent.get(call)
        while isinstance(parent, (cst.Element, cst.List, cst.Tuple, cst.DictElement, cst.Dict)):
            node, parent = parent, self.tree.parent.get(parent)
        if isinstance(parent, cst.Arg):
            parent = self.tree.parent.get(parent)
            kept_in = parent.func.value if isinstance(parent, cst.Call) and isinstance(parent.func, cst.Attribute) \
                and parent.func.attr.value in ("append", "extend") else None
        elif isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
            kept_in = parent.targets[0].target
            kept_in = kept_in.value if isinstance(kept_in, cst.Subscript) else kept_in
        else:
            return False
        return isinstance(kept_in, cst.Name) and self.scopes.returns_name(function, kept_in.value)

    def _called_by_name(self, method: cst.FunctionDef) -> bool:
        """Some call of the file spells the method's name (``extractor.remove_hooks()`` on an
        object whose class the call graph does not know)."""
        return bool(self.iterations.calls.calls_spelled(method.name.value, method=True))

    def _removes_in(self, region: cst.CSTNode, depth: int = 0) -> bool:
        """A ``.remove()`` in ``region`` or in a function of the file it calls by name, and so
        on down to ``_MAX_CALL_DEPTH`` calls (``self.remove_hooks()``, ``detach_all(hooks)``,
        ``harness.measure(loader)`` that removes its recorders' handles, ``self.step(batch)``
        whose end calls ``self.remove_hooks()``)."""
        known = self._removals.get((region, depth))
        if known is None:
            self._removals[(region, depth)] = False  # (a recursive call reads no removal through itself)
            known = self._removals[(region, depth)] = self._has_remove(region) or depth < _MAX_CALL_DEPTH and any(
                f is not region and self._removes_in(f, depth + 1)
                for other in self.tree.descendants(region, cst.Call)
                for f in self._functions_called(other))
        return known

    def _functions_called(self, call: cst.Call) -> list[cst.FunctionDef]:
        """The file's functions ``call`` may run: those of its name, and the one the call graph
        resolves (``cam(image)`` runs ``GradCAM.__call__``)."""
        functions = list(self.scopes.functions_by_name.get(terminal_name(call.func) or "", []))
        callee = self.iterations.calls.callee(call)
        if callee is not None and isinstance(callee.function, cst.FunctionDef) and callee.function not in functions:
            functions.append(callee.function)
        return functions

    def _has_remove(self, region: cst.CSTNode) -> bool:
        return any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "remove" and not c.args
            for c in self.tree.descendants(region, cst.Call)
        )

    def _guarded(self, call: cst.Call, iteration: Iteration) -> bool:
        """Registered only once: under ``if handle is None:``, ``if not hooked:``,
        ``if epoch == 0:``, ``if name not in handles:`` — not under ``if step % 100 == 0:``."""
        for ancestor in self.tree.ancestors(call):
            if ancestor is iteration:
                return False
            if not (isinstance(ancestor, cst.If) and self.tree.contains(ancestor.body, call)):
                continue
            test = ancestor.test
            if tests_every_n_steps(test, self.tree):
                continue
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                return True
            selecting = self._member_names_around(ancestor)
            for comparison in self.tree.descendants(test, cst.Comparison):
                if isinstance(comparison.left, cst.Name) and comparison.left.value in selecting:
                    continue  # ``for name, m in model.named_modules(): if name == layer:`` picks a member
                if isinstance(comparison.left, cst.SimpleString) or any(
                        isinstance(c.comparator, cst.SimpleString) for c in comparison.comparisons):
                    continue  # ``if "register_hook" in modes:``, ``if self.layers == "all":`` read the configuration, every time
                if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.Equal, cst.In, cst.NotIn)) for c in comparison.comparisons):
                    return True
        return False


    def _member_names_around(self, node: cst.CSTNode) -> set[str]:
        """``_member_names`` of every ``for`` loop around ``node``."""
        return set().union(*(self._member_names(loop) for loop in self.scopes.loops_around(node)
                             if isinstance(loop, cst.For)))

    def _member_names(self, loop: cst.For) -> set[str]:
        """The loop's targets and the names its body computes from them (``counter =
        COUNTERS.get(type(m))``): a test of one picks members, it does not guard a registration."""
        names = _target_names(loop.target)
        for assign in self.scopes.loop_body_nodes(loop, cst.Assign):
            if any(n.value in names for n in self.tree.descendants(assign.value, cst.Name)):
                names |= {n for t in assign.targets for n in _target_names(t.target)}
        return names


# Methods Python runs without a call in the file: a context manager's exit, a finaliser.
_IMPLICITLY_CALLED = frozenset({"__exit__", "__aexit__", "__del__"})


def _position(target: cst.BaseExpression, name: str) -> Optional[int]:
    """Where ``name`` is in a ``for`` target that unpacks (``for model, tap in ...``: 0 for
    ``model``); None for a plain target."""
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            if isinstance(element.value, cst.Name) and element.value.value == name:
                return index
    return None


def _navigated_from(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The object whose attributes, items or members ``expr`` reads: ``model`` for
    ``model.layer4[0]`` and ``dict(model.named_children())["layer4"]``."""
    while True:
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif (owner := _member_owner(expr)) is not None:
            expr = owner
        else:
            return expr


def _unwrapped(choice: cst.IfExp) -> Optional[cst.Name]:
    """The object both arms of ``choice`` read (``model`` of ``model.module if hasattr(model,
    "module") else model``, a wrapper's unwrapping): the same object's members either way."""
    body, orelse = _navigated_from(choice.body), _navigated_from(choice.orelse)
    return orelse if isinstance(body, cst.Name) and isinstance(orelse, cst.Name) and body.value == orelse.value else None


def _walks_down(value: Optional[cst.BaseExpression], name: str) -> bool:
    """``value`` reads a member of what ``name`` holds (a step down a module's children)."""
    if value is None or isinstance(value, cst.Name):
        return False
    base = _navigated_from(value)
    return isinstance(base, cst.Name) and base.value == name


def _member_owner(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The module whose members ``expr`` lists or looks up: ``model`` for
    ``dict(model.named_modules())``, ``model.get_submodule(name)``, ``list(model.children())``,
    ``getattr(model, name)``."""
    if not isinstance(expr, cst.Call):
        return None
    if isinstance(expr.func, cst.Name) and expr.func.value in ("dict", "list", "tuple") and expr.args:
        return _member_owner(expr.args[0].value)
    if isinstance(expr.func, cst.Name) and expr.func.value == "getattr" and expr.args:
        return expr.args[0].value
    if isinstance(expr.func, cst.Attribute) and (expr.func.attr.value in _MEMBER_ITERATORS or
                                                 expr.func.attr.value in ("get_submodule", "get_parameter")):
        return expr.func.value
    return None


def _names_bound_by(repeat: cst.CSTNode) -> set[str]:
    """The names a loop or comprehension binds anew on each iteration (its targets)."""
    if isinstance(repeat, cst.For):
        return _target_names(repeat.target)
    names: set[str] = set()
    clause = getattr(repeat, "for_in", None)
    while clause is not None:
        names |= _target_names(clause.target)
        clause = clause.inner_for_in
    return names


def _target_names(target: cst.BaseExpression) -> set[str]:
    names = set()
    stack: list[cst.CSTNode] = [target]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            names.add(node.value)
        stack.extend(node.children)
    return names
