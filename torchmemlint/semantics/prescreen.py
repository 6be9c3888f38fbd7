"""The pre-screen: one parse with Python's own ``ast`` (several times faster than LibCST's parser)
and one walk that records what a rule can match on, so that LibCST parsing and the semantic
model are spent only on files where some selected rule could report something.

The facts are deliberately coarse supersets of what the rules look for: a rule's
``could_match(facts)`` may say yes where ``check`` then finds nothing, never the reverse.
Places where values are kept are judged where they are (``FileFacts.kept_per_step``): in a loop
that may run steps, or in a function that may run once per step (as ``Iterations.step_iteration``
asks), not merely in the same file as some step. The same parse gives syntax errors with
CPython's own message and position.

This module must not import LibCST: a run whose files all fail the pre-screen never loads it.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Union

from torchmemlint.diagnostics import FileError
from torchmemlint.semantics.vocabulary import (
    CHUNK_STRIDE, DATASET_NAME, EVAL_FUNCTION, FORWARD_HOOK_REGISTRATIONS, GENERATION_FUNCTION, IN_PLACE_WRITES, ITERATION_BUILTINS, LOADER_ITERABLE, NON_TENSOR_ANNOTATIONS, SEARCH_DRIVERS, METER_CLASS, METER_METHODS, MODEL_RUNNING_METHODS, PER_STEP_METHODS, STORING_METHODS,
    TENSOR_PIECES, keeps_every_input, is_model_name, is_step_identifier, is_step_target, makes_training_step, steps_environment,
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Calls that hand the functions they get to PyTorch or a search, to run once per step or trial
# (``Calls.forward_hooks``, ``step_closures``, ``trial_objectives``).
_HANDING_CALLS = FORWARD_HOOK_REGISTRATIONS | SEARCH_DRIVERS | {"step"}
# PEP 263 (and the BOM): how the file's bytes become text, as CPython and LibCST decode them.
_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(eq=False)
class LoopFacts:
    """A ``for``/``while`` loop: the identifiers of its header (target and iterable, with
    comments and strings: a superset of what the semantic layer reads there) and whether its body
    (nested functions included: a superset again) makes a training step."""

    header_identifiers: frozenset[str]
    while_true: bool = False
    has_step_call: bool = False  # a backward, an optimizer or environment step, autograd.grad
    iterable_name: Optional[str] = None  # ``for b in pbar``: its identifiers join those of ``pbar = ...``
    parent: Optional["LoopFacts"] = None  # the loop around it (in any function)
    calls: set[str] = field(default_factory=set)  # names called in its body outside inner loops
    assigns: bool = False  # an assignment in its body outside inner loops
    live: Optional[bool] = None  # ``FileFacts.live_loop``, once asked
    feeds_model: bool = False  # a call named for (or handed) a model in its body is given something
    # ``f`` and ``m`` of ``f(x, m)``, ``g`` of ``obj.g()``: what its body (nested loops included)
    # calls, and the names it hands to calls
    names_in_calls: set[str] = field(default_factory=set)
    scope: Optional["_Scope"] = None  # the function holding it
    indexes_dataset: bool = False  # ``x = dset[i]`` in its body (``Scopes.indexes_a_dataset``, TML008's)

    @property
    def could_be_step_loop(self) -> bool:
        """``Scopes.is_step_loop`` may hold for this loop (``evaluates_each_element``: a loop
        handing its element to a model in a function that sets eval mode or is named for
        evaluation; ``_strided_stop``: ``range(0, n, batch_size)``; ``chunks_a_tensor``: over
        ``x.split(1)`` or ``range(x.shape[0])``, its count spelled in the header), or TML008's loop
        over a dataset's items (``Scopes.indexes_a_dataset``)."""
        return self.while_true or self.has_step_call or any(
            (is_step_identifier(name) and name not in ITERATION_BUILTINS) or is_step_target(name)
            for name in self.header_identifiers
        ) or self.feeds_model and self.scope is not None and (
            self.scope.sets_eval_mode or bool(EVAL_FUNCTION.search(self.scope.name or ""))) or (
            "range" in self.header_identifiers and any(CHUNK_STRIDE.search(n) for n in self.header_identifiers)) or \
            not self.header_identifiers.isdisjoint(TENSOR_PIECES) or \
            "range" in self.header_identifiers and not self.header_identifiers.isdisjoint(("shape", "size")) or \
            self.indexes_dataset


@dataclass
class ClassFacts:
    name: str
    bases: tuple[str, ...]  # as spelled, those that are dotted names
    methods: set[str] = field(default_factory=set)  # defined directly in the body
    stores_on_ctx: bool = False  # ``ctx.x = ...`` in its ``forward``/``setup_context``


# Kinds of places where values are kept (``FileFacts.keeps``).
CALL_STORE = "call"  # ``c.append(v)`` and friends, or a call of a function or method of this file
SUBSCRIPT_STORE = "subscript"  # ``c[k] = v``
LIST_STORE = "list"  # ``c += [v]``
ACCUMULATION = "accumulation"  # ``t += v``, ``t = t + v``
JOIN = "join"  # ``acc = torch.cat([acc, x])``
CARRY_ASSIGNMENT = "carry"  # ``self.x = ...`` or a parameter rebound: carried to the next call
LOOP_ASSIGNMENT = "loop"  # an assignment in a loop body
IN_PLACE_WRITE = "in-place"  # ``buf.add_(v)``, ``t.copy_(v)``
HOOK = "hook"  # ``m.register_forward_hook(f)``, ``register_module_forward_hook(f)``


@dataclass
class FileFacts:
    """What one walk over a file's ``ast`` saw: the names, calls and attributes rules trigger on
    (``Rule.could_match``), and two coarse file-level facts the value flow needs: whether anything
    may run once per training step (``steps``), and which kinds of keeping places exist (``keeps``).
    Both are deliberately file-wide: a function the file calls from a step loop runs per step too,
    wherever it is defined."""

    source: bytes
    method_calls: set[str] = field(default_factory=set)  # ``x.name(...)``
    name_calls: set[str] = field(default_factory=set)  # ``name(...)``
    attributes: set[str] = field(default_factory=set)  # ``x.name``, called or not
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted name, as ``ImportTable``
    function_names: set[str] = field(default_factory=set)
    functions_calling_in_loops: set[str] = field(default_factory=set)  # a call in a loop of their own
    classes: list[ClassFacts] = field(default_factory=list)
    decorators: set[str] = field(default_factory=set)  # dotted, called or not
    # The decorators of functions that may take or return tensors (a method, a parameter annotated
    # as a tensor, a return annotation that does not rule tensors out): what a cache could pin.
    tensor_function_decorators: set[str] = field(default_factory=set)
    statement_expressions: set[str] = field(default_factory=set)  # ``x.y`` / ``x.y(...)`` as statements
    bare_with_items: set[str] = field(default_factory=set)  # ``with x.y:`` (no call)
    for_iterable_identifiers: set[str] = field(default_factory=set)  # of every ``for`` loop's iterable
    eval_mode_then_call: bool = False  # ``m.eval()``/``m.train(False)`` and another call in one scope
    true_keywords: set[str] = field(default_factory=set)  # ``f(name=True)``
    assigns_foreign_requires_grad: bool = False  # ``m.requires_grad = ...``, ``m`` not ``self``
    steps: bool = False  # a loop that may be a step loop, a per-step method, or a hook registration
    keeps: set[str] = field(default_factory=set)  # the kinds of keeping places (CALL_STORE ...)
    statement_lines: list[int] = field(default_factory=list)  # first line of each top-level statement
    tree: Optional[ast.Module] = None  # the ``ast`` parse, for ``deepest_line``
    depth: int = 0  # how deep its nodes nest, counted as ``deepest_line`` counts
    # Where values are kept, by kind (``CALL_STORE`` ...): (loops around, function, in a lambda,
    # the name the container hangs from or None); loops with assignments (``LOOP_ASSIGNMENT``).
    sites: dict[str, list[tuple[tuple[LoopFacts, ...], "_Scope", bool, Optional[str]]]] = field(default_factory=dict)
    assigning_loops: list[LoopFacts] = field(default_factory=list)
    # Parameters rebound (``CARRY_ASSIGNMENT``): (loops around, function, in a lambda, parameter).
    parameter_carries: list[tuple[tuple[LoopFacts, ...], "_Scope", bool, str]] = field(default_factory=list)
    # Calls by the name they are spelled with (``f(...)``, ``x.f(...)``): (loops around, calling
    # function, in a lambda, with arguments).
    call_sites: dict[str, list[tuple[tuple[LoopFacts, ...], "_Scope", bool, bool]]] = field(default_factory=dict)
    loops: list[LoopFacts] = field(default_factory=list)
    step_functions: set[str] = field(default_factory=set)  # names of functions that step, themselves or in a helper
    own_step_functions: set[str] = field(default_factory=set)  # names of functions with a step of their own
    # Identifiers in what ``_HANDING_CALLS`` get (with ``hands_factories``: one of them is a call,
    # whose function hands over a nested function it returns), and the names returned anywhere.
    handed: set[str] = field(default_factory=set)
    hands_factories: bool = False
    returned: set[str] = field(default_factory=set)
    # ``alias = f`` / ``alias = obj.f`` / ``alias = partial(f, ...)``: calling ``alias`` calls ``f``;
    # ``alias = factory(...)`` (target ``factory()``): it calls what ``factory`` returns (by function
    # name, the names its ``return``s give: ``Calls._returned_function``).
    alias_targets: dict[str, set[str]] = field(default_factory=dict)
    returned_by: dict[str, set[str]] = field(default_factory=dict)
    _aliases_of: Optional[dict[str, set[str]]] = None
    _live_kinds: dict[str, bool] = field(default_factory=dict)
    _keeping: Optional[set[str]] = None
    _per_step: dict[str, bool] = field(default_factory=dict)
    _trains_through_calls: bool = False  # ``live_loop`` marked the loops that call a step function

    def contains(self, text: str) -> bool:
        return text.encode() in self.source

    def could_derive(self, cls: ClassFacts, matches: Callable[[str], bool]) -> bool:
        """As ``Scopes.class_bases``: whether a base of ``cls`` (qualified through the imports,
        else as spelled), or of the classes of this file it names, satisfies ``matches``."""
        by_name: dict[str, list[ClassFacts]] = {}
        for other in self.classes:
            by_name.setdefault(other.name, []).append(other)
        pending, seen = [cls], {id(cls)}
        while pending:
            for base in pending.pop().bases:
                name = self.qualify(base) or base
                if matches(name):
                    return True
                for local in by_name.get(name, ()):
                    if id(local) not in seen:
                        seen.add(id(local))
                        pending.append(local)
        return False

    def kept_per_step(self, kinds: frozenset[str]) -> bool:
        """Whether a keeping place of one of ``kinds`` may be in a step iteration (as
        ``Iterations.step_iteration`` finds them): in a loop that may run steps, in a lambda where
        hooks are registered, or in a function that may run once per step whose container is not
        one of its own locals (``Stores.outlives``: those die with the call)."""
        for kind in kinds:
            known = self._live_kinds.get(kind)
            if known is None:
                known = self._live_kinds[kind] = self._kind_kept_per_step(kind)
            if known:
                return True
        return False

    def hooks_may_pile_up(self) -> bool:
        """A superset of where ``Hooks.piles_up`` finds a registration repeated: in a loop, in a
        function that runs per step, in a method called on an object (``_called_repeatedly``), or
        in a function called, through callers, from a loop (a class's constructions for an
        ``__init__``)."""
        known = self._live_kinds.get(HOOK)
        if known is None:
            known = self._live_kinds[HOOK] = any(
                loops or (scope.name is not None and (scope.cls is not None and scope.name in self.call_sites
                                                      or self.runs_per_step(scope.name) or self._called_in_loop(scope.name)))
                for loops, scope, _, _ in self.sites.get(HOOK, ()))
        return known

    def _called_in_loop(self, name: str) -> bool:
        visited, pending = {name}, [name]
        while pending:
            function = pending.pop()
            sites = self._sites_of(function)
            if function == "__init__":  # ``Probe(model)`` runs the ``__init__`` of a class of the file
                sites = [*sites, *(site for cls in self.classes for site in self.call_sites.get(cls.name, ()))]
            for loops, scope, _, _ in sites:
                if loops:
                    return True
                if scope.name is not None and scope.name not in visited:
                    visited.add(scope.name)
                    pending.append(scope.name)
        return False

    def _kind_kept_per_step(self, kind: str) -> bool:
        if kind == LOOP_ASSIGNMENT:  # a loop-carried chain lives in a loop that crosses a step
            return any(self._in_crossing_loop(loop) for loop in self.assigning_loops)
        if kind == CARRY_ASSIGNMENT and any(self._fed_back(*site) for site in self.parameter_carries):
            return True
        site_live = self._site_live
        if any(site_live(*site) for site in self.sites.get(kind, ())):
            return True
        if kind == CALL_STORE:  # a call of a function of this file that may keep an argument
            return any(with_arguments and site_live(loops, scope, in_lambda, None)
                       for name in self._keeping_functions() for loops, scope, in_lambda, with_arguments
                       in self._sites_of(name))
        return False

    def _keeping_functions(self) -> set[str]:
        """A superset of the functions ``Stores.kept_parameters`` finds keeping something: a
        store, accumulation or join into a container that is not their own local, or a call of
        such a function with arguments."""
        if self._keeping is None:
            keeping = self._keeping = {
                scope.name for kind in (CALL_STORE, SUBSCRIPT_STORE, LIST_STORE, ACCUMULATION, JOIN)
                for _, scope, _, root in self.sites.get(kind, ())
                if scope.name is not None and not _local_of(scope, root)}
            pending = list(keeping)
            while pending:
                for _, scope, _, with_arguments in self._sites_of(pending.pop()):
                    if with_arguments and scope.name is not None and scope.name not in keeping:
                        keeping.add(scope.name)
                        pending.append(scope.name)
        return self._keeping

    def _site_live(self, loops: tuple[LoopFacts, ...], scope: "_Scope", in_lambda: bool, root: Optional[str]) -> bool:
        if any(self.live_loop(loop) for loop in loops):
            return True
        if in_lambda and HOOK in self.keeps:
            return True  # a lambda registered as a forward hook runs on every forward pass
        if scope.name is None:
            return False
        if _local_of(scope, root) and not (root in scope.params and self._fed_back(loops, scope, in_lambda, root)):
            return False  # it dies with the call, unless a parameter handed back (``total = body(x, total)``)
        return self.runs_per_step(scope.name)

    def _in_crossing_loop(self, loop: Optional[LoopFacts]) -> bool:
        """In a loop whose iterations cross a training step (``LoopCarried._crosses_step``: a
        step in its body, an iteration over a loader, an evaluation loop: ``feeds_model``, a
        step loop that calls anything: ``_runs_model_per_step``, or a loop calling a function
        of this file that makes a step: ``Iterations.trains_through_calls``)."""
        while loop is not None:
            if loop.has_step_call or any(LOADER_ITERABLE.search(i) for i in loop.header_identifiers) or \
                    not loop.names_in_calls.isdisjoint(self.step_functions) or \
                    loop.feeds_model and loop.scope is not None and loop.scope.sets_eval_mode or \
                    loop.could_be_step_loop and loop.calls or \
                    loop.feeds_model and loop.scope is not None and GENERATION_FUNCTION.search(loop.scope.name or ""):
                return True  # (the last: a generation loop of a model's ``generate_text``)
            loop = loop.parent
        return False

    def _fed_back(self, loops: tuple[LoopFacts, ...], scope: "_Scope", in_lambda: bool, parameter: str) -> bool:
        """``LoopCarried._fed_back``: a parameter the function rebinds and returns, from a call of
        it that may be in a step loop; or rebound where a loop that may run steps holds it."""
        if any(self.live_loop(loop) for loop in loops):
            return True
        return scope.name is not None and parameter in self.returned and any(
            any(self.live_loop(loop) for loop in site_loops) for site_loops, _, _, _ in self._sites_of(scope.name))

    def live_loop(self, loop: LoopFacts) -> bool:
        """The loop may run steps: ``Scopes.is_step_loop``, a loop that calls a function of this
        file with a step of its own (``Iterations._trains_through_calls``), or one over a loader
        (``Iterations.iterates_loader``)."""
        if not self._trains_through_calls:
            self._mark_loops_calling_steps()
        if loop.live is None:
            loop.live = loop.could_be_step_loop or any(LOADER_ITERABLE.search(i) for i in loop.header_identifiers)
        return loop.live

    def _mark_loops_calling_steps(self) -> None:
        self._trains_through_calls = True
        stepping = set(self.step_functions)
        if "__init__" in stepping:  # ``Trainer(...)`` runs its ``__init__``
            stepping.update(cls.name for cls in self.classes)
        stepping.update(alias for name in list(stepping) for alias in self.aliases_of(name))
        for loop in self.loops:
            if not loop.calls.isdisjoint(stepping):
                while loop is not None and not loop.live:
                    loop.live = True
                    loop = loop.parent

    def aliases_of(self, name: str) -> set[str]:
        """The names bound, directly or through other aliases, to the function ``name``."""
        if self._aliases_of is None:
            self._aliases_of = {}
            for alias, targets in self.alias_targets.items():
                for target in targets:
                    for runs in self.returned_by.get(target[:-2], ()) if target.endswith("()") else (target,):
                        self._aliases_of.setdefault(runs, set()).add(alias)
        found, pending = set(), [name]
        while pending:
            for alias in self._aliases_of.get(pending.pop(), ()):
                if alias not in found and alias != name:
                    found.add(alias)
                    pending.append(alias)
        return found

    def _sites_of(self, name: str) -> list[tuple[tuple[LoopFacts, ...], "_Scope", bool, bool]]:
        """The calls that may run the function ``name``: spelled so, or through an alias."""
        sites = self.call_sites.get(name, [])
        if name == "update" and any(self.aliases.get(base.split(".")[0], base).startswith("torchmetrics")
                                    or base.endswith("Metric") for cls in self.classes if "update" in cls.methods
                                    for base in cls.bases):
            # calling a torchmetrics ``Metric`` object (``self.knn(feats)``) runs its ``update``
            sites = [site for spelled in self.call_sites.values() for site in spelled]
        elif name == "__call__":  # calling an object (``unit(batch)``, ``self.actor(obs)``) runs its ``__call__``
            sites = [site for spelled, found in self.call_sites.items() if spelled not in self.function_names
                     for site in found]
        aliases = self.aliases_of(name) if self.alias_targets else ()
        return [*sites, *(site for alias in aliases for site in self.call_sites.get(alias, ()))] if aliases else sites

    def runs_per_step(self, name: str) -> bool:
        """A superset of ``Iterations.runs_per_step`` for the functions of that name: a per-step
        method, a function handed to a hook registration, an optimizer's ``step`` or a search, one
        called from a loop that may run steps (any loop when it makes a step itself), or from a
        function that runs per step. A search backwards through the callers, each function
        visited once per file."""
        known = self._per_step.get(name)
        if known is not None:
            return known
        visited, pending = {name}, [name]
        while pending:
            function = pending.pop()
            if self._per_step.get(function) or self._starts_steps(function):
                self._per_step[name] = True
                return True
            for _, scope, _, _ in self._sites_of(function):
                caller = scope.name
                if caller is not None and caller != function and caller not in visited and \
                        self._per_step.get(caller) is not False:
                    visited.add(caller)
                    pending.append(caller)
        for function in visited:  # none of them, nor any of their callers, starts one
            self._per_step[function] = False
        return False

    def _starts_steps(self, name: str) -> bool:
        if name == "forward" or name in PER_STEP_METHODS:
            return True
        handed = (name, *self.aliases_of(name)) if self.alias_targets else (name,)
        if any(h in self.handed or self.hands_factories and h in self.returned for h in handed):
            return True
        makes_step = name in self.step_functions
        if makes_step and name in self.own_step_functions:
            return True  # (``Iterations._one_optimizer_step_per_call``: whoever calls it)
        return any(loops and (makes_step or any(self.live_loop(loop) for loop in loops))
                   for loops, _, _, _ in self._sites_of(name))

    def qualify(self, dotted: str) -> Optional[str]:
        """As ``ImportTable.qualify``: the dotted name through the imports, or None."""
        root, _, rest = dotted.partition(".")
        target = self.aliases.get(root)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target


def decode(source: bytes) -> Union[str, FileError]:
    """The text of a Python file's bytes (BOM, PEP 263 cookie, else UTF-8)."""
    encoding = "utf-8-sig" if source.startswith(b"\xef\xbb\xbf") else "utf-8"
    lines = source.split(b"\n", 2)[:2]
    for number, line in enumerate(lines):
        match = _CODING_COOKIE.match(line)
        if match:
            encoding = match.group(1).decode("ascii")
            if encoding.lower().replace("_", "-") in ("utf-8", "utf8") and source.startswith(b"\xef\xbb\xbf"):
                encoding = "utf-8-sig"
            break
        if number == 0 and not _BLANK_OR_COMMENT.match(line):
            break  # the cookie may be on line 2 only under a comment or blank line 1
    try:
        return source.decode(encoding)
    except LookupError:
        return FileError("", f"cannot decode file: unknown encoding {encoding!r}")
    except UnicodeDecodeError as error:
        return FileError("", f"cannot decode file: {error}")


def scan(source: bytes, path: str) -> Union[FileFacts, FileError]:
    """Parse ``source`` with ``ast`` and collect its facts, or say why it cannot be checked."""
    text = decode(source)
    if isinstance(text, FileError):
        return FileError(path, text.message)
    try:
        tree = ast.parse(text, path)
    except SyntaxError as error:
        line = error.lineno or 1
        column = max((error.offset or 1) - 1, 0)
        return FileError(path, f"syntax error: {error.msg}", max(line, 1), column)
    except ValueError as error:  # NUL bytes on Python < 3.12
        return FileError(path, f"syntax error: {error}")
    except (RecursionError, MemoryError):
        return FileError(path, "file is nested too deeply to parse")
    facts = FileFacts(source, tree=tree)
    facts.statement_lines = [first_line(statement) for statement in tree.body]
    try:
        _Walker(facts, text).walk(tree)
    except RecursionError:
        return FileError(path, "file is nested too deeply to parse")
    return facts


def first_line(statement: ast.stmt) -> int:
    """The line a statement's code starts on: its first decorator's, if it has any."""
    return min([statement.lineno, *(decorator.lineno for decorator in getattr(statement, "decorator_list", ()))])


def deepest_line(tree: ast.AST, limit: int) -> Optional[int]:
    """The line of the first node nested more than ``limit`` levels deep, counted as LibCST
    nests them, or None. ``ast`` keeps ``a and b and c`` as one node with three values, LibCST
    as two nested ones (its native parser overflows its stack on ten thousand of them); the other
    chains (``a + b + c``, ``x[0][0]``, ``f().g()``) nest alike in both, comparisons in neither.
    An iterative walk: it must not itself run out of stack on what it measures."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if type(node) is ast.BoolOp:
            depth += len(node.values) - 2  # (its values may all be leaves, which are not walked)
        if depth > limit:
            return getattr(node, "lineno", 1)
        for child in _children(node):
            push((child, depth + 1))
    return None


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Walker:
    """An iterative depth-first walk that knows, at each node, every loop around it, the loops
    of its own function around it, and its function."""

    def __init__(self, facts: FileFacts, text: str) -> None:
        self.facts = facts
        self.lines = text.splitlines()
        self.made_by_calls: dict[str, list[ast.Call]] = {}  # ``name = call(...)``: the calls, by name

    def _header(self, loop: Union[ast.For, ast.AsyncFor, ast.While]) -> LoopFacts:
        # From the ``for``/``while`` line to the line before the body (a body on the header's
        # own line comes with it): every character of LibCST's view of the target and iterable.
        text = "\n".join(self.lines[loop.lineno - 1:max(loop.body[0].lineno - 1, loop.lineno)])
        while_true = isinstance(loop, ast.While) and isinstance(loop.test, ast.Constant) and loop.test.value is True
        named = loop.iter.id if not isinstance(loop, ast.While) and type(loop.iter) is ast.Name else None
        return LoopFacts(frozenset(_IDENTIFIER.findall(text)), while_true, iterable_name=named)

    def _iterable_identifiers(self, loop: Union[ast.For, ast.AsyncFor]) -> set[str]:
        """The identifiers from the end of a ``for`` loop's target to the end of its header:
        those of LibCST's view of the iterable, comments and string contents included."""
        target = loop.target
        line = self.lines[target.end_lineno - 1]
        column = len(line.encode("utf-8")[:target.end_col_offset].decode("utf-8", "ignore"))
        last = max(loop.body[0].lineno - 1, loop.lineno)
        text = "\n".join([line[column:], *self.lines[target.end_lineno:last]])
        return set(_IDENTIFIER.findall(text)) - {"in"}

    def walk(self, tree: ast.Module) -> None:
        facts = self.facts
        method_calls, name_calls, attributes, keeps = facts.method_calls, facts.name_calls, facts.attributes, facts.keeps
        sites, call_sites = facts.sites, facts.call_sites
        # (node, every loop around it, whether a loop of its own function holds it, its function,
        # whether a lambda holds it, its depth as ``deepest_line`` counts it)
        stack: list[tuple[ast.AST, tuple[LoopFacts, ...], bool, _Scope, bool, int]] = [
            (tree, (), False, _Scope(None), False, 0)]
        deepest = 0
        pop, push = stack.pop, stack.append
        children = _children
        class_of: dict[int, ClassFacts] = {}  # id of a function defined directly in a class body
        loops = facts.loops
        called: set[str] = set()
        called_in_loops: set[str] = set()  # names called inside a loop
        mode_switched: set[str] = set()  # receivers of ``x.eval()`` / ``x.train(False)``
        meter_updates: list[tuple[tuple[LoopFacts, ...], _Scope, bool, Optional[str]]] = []
        scopes = [stack[0][3]]
        while stack:
            node, enclosing, in_loop, scope, in_lambda, depth = pop()
            kind = type(node)
            if kind not in _HANDLED:
                if kind is ast.BoolOp:
                    depth += len(node.values) - 2
                if depth > deepest:
                    deepest = depth
                depth += 1
                for child in children(node):
                    push((child, enclosing, in_loop, scope, in_lambda, depth))
                continue
            if depth > deepest:
                deepest = depth
            depth += 1
            if kind is ast.Attribute:
                attributes.add(node.attr)
            elif kind is ast.Call:
                func = node.func
                scope.calls += 1
                if in_loop and scope.name is not None:
                    facts.functions_calling_in_loops.add(scope.name)
                for keyword in node.keywords:
                    if type(keyword.value) is ast.Constant and keyword.value.value is True and keyword.arg:
                        facts.true_keywords.add(keyword.arg)
                if type(func) is ast.Attribute:
                    name = func.attr
                    method_calls.add(name)
                    if name in STORING_METHODS and node.args or \
                            name == "update" and len(node.args) == 1 and type(node.args[0]) is ast.DictComp:
                        # (``results.update({i: o for i, o in zip(ids, out)})`` adds entries as ``append`` does)
                        keeps.add(CALL_STORE)
                        sites.setdefault(CALL_STORE, []).append((enclosing, scope, in_lambda, _root(func.value)))
                    elif name in METER_METHODS and node.args:
                        # a store only if a meter class is made here (below)
                        meter_updates.append((enclosing, scope, in_lambda, _root(func.value)))
                    elif name in IN_PLACE_WRITES and node.args:
                        keeps.add(IN_PLACE_WRITE)
                        sites.setdefault(IN_PLACE_WRITE, []).append((enclosing, scope, in_lambda, _root(func.value)))
                    elif name == "eval" or name == "train" and any(
                        isinstance(a, ast.Constant) and a.value is False
                        for a in (*node.args, *(k.value for k in node.keywords))
                    ):
                        scope.sets_eval_mode = True
                        if type(func.value) is ast.Name:
                            mode_switched.add(func.value.id)
                    elif name in _AUTOGRAD_FUNCTIONS or makes_training_step(name, _dotted(func.value)) \
                            or steps_environment(name, _terminal_name(func.value)):
                        scope.makes_step = True
                        for loop in enclosing:
                            loop.has_step_call = True
                elif type(func) is ast.Name:
                    name = func.id
                    name_calls.add(name)
                    if name in _AUTOGRAD_FUNCTIONS:  # may be an aliased ``torch.autograd.grad``
                        scope.makes_step = True
                        for loop in enclosing:
                            loop.has_step_call = True
                else:
                    name = ""
                with_arguments = bool(node.args or node.keywords)
                if with_arguments:
                    called.add(name)
                if name:
                    call_sites.setdefault(name, []).append((enclosing, scope, in_lambda, with_arguments))
                    if enclosing:
                        given = {name, *(arg.id for arg in node.args if type(arg) is ast.Name)}
                        for loop in enclosing:
                            loop.names_in_calls |= given
                    if enclosing:
                        enclosing[-1].calls.add(name)
                if in_loop:
                    called_in_loops.add(name)
                if name.startswith("register_") and "hook" in name:
                    keeps.add(HOOK)
                    sites.setdefault(HOOK, []).append((enclosing, scope, in_lambda, None))
                if enclosing and node.args and (is_model_name(name) or name == "forward" or any(
                        is_model_name(_terminal_name(arg)) for arg in node.args) or name in MODEL_RUNNING_METHODS
                        and type(node.func) is ast.Attribute and is_model_name(_terminal_name(node.func.value))):
                    # (``Scopes._runs_a_model``; ``self.forward(x)``; ``model.predict(x)``)
                    for loop in enclosing:  # (given the element, or a name computed from it in the body)
                        loop.feeds_model = True
                if name in _HANDING_CALLS:
                    for given in (*node.args, *(k.value for k in node.keywords)):
                        facts.hands_factories = facts.hands_factories or type(given) is ast.Call
                        for part in ast.walk(given):
                            if type(part) is ast.Name:
                                facts.handed.add(part.id)
                            elif type(part) is ast.Attribute:
                                facts.handed.add(part.attr)
            elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
                self._assignment(node, enclosing, in_loop, scope, in_lambda)
            elif kind is ast.Expr:
                value = node.value
                spelled = _dotted(value.func if type(value) is ast.Call else value)
                if spelled is not None:
                    facts.statement_expressions.add(spelled)
            elif kind is ast.withitem:
                if type(node.context_expr) is not ast.Call:
                    spelled = _dotted(node.context_expr)
                    if spelled is not None:
                        facts.bare_with_items.add(spelled)
            elif kind is ast.Import:
                for alias in node.names:
                    if alias.asname:
                        facts.aliases[alias.asname] = alias.name
                    else:  # ``import torch.nn`` binds ``torch``
                        root = alias.name.split(".")[0]
                        facts.aliases[root] = root
            elif kind is ast.ImportFrom:
                for alias in node.names:
                    if not node.level and node.module and alias.name != "*":
                        facts.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif kind is ast.Return:
                value = node.value
                for returned in (value.elts if type(value) is ast.Tuple else (value,)):
                    if type(returned) is ast.Name:
                        facts.returned.add(returned.id)
                        if scope.name is not None:
                            facts.returned_by.setdefault(scope.name, set()).add(returned.id)
                    elif type(returned) is ast.Attribute and scope.name is not None:
                        # ``return self.per_sample_loss``: a bound method handed out (``Calls._returned_function``)
                        facts.returned_by.setdefault(scope.name, set()).add(returned.attr)
            elif kind is ast.Global or kind is ast.Nonlocal:
                scope.declared.update(node.names)
            elif kind in _LOOPS:
                header = self._header(node)
                header.parent = enclosing[-1] if enclosing else None
                header.scope = scope
                loops.append(header)
                if kind is not ast.While:
                    facts.for_iterable_identifiers.update(self._iterable_identifiers(node))
                    _bind(node.target, scope.bound)
                    if _held_from(node.iter) is not None:
                        _bind(node.target, scope.held)
                inner_loops = (*enclosing, header)
                for child in node.body:
                    push((child, inner_loops, True, scope, in_lambda, depth))
                for child in (*node.orelse, *((node.test,) if kind is ast.While else (node.target, node.iter))):
                    push((child, enclosing, in_loop, scope, in_lambda, depth))
                continue
            elif kind in _FUNCTIONS:
                facts.function_names.add(node.name)
                cls = class_of.get(id(node))
                if cls is not None and (node.name in PER_STEP_METHODS or node.name == "forward"):
                    facts.steps = True
                signature = node.args
                arguments = (*signature.posonlyargs, *signature.args)
                ctx = arguments[0].arg if cls is not None and arguments and node.name in _CTX_METHODS else None
                params = frozenset(a.arg for a in (*arguments, *signature.kwonlyargs,
                                                   *filter(None, (signature.vararg, signature.kwarg))))
                inner = _Scope(node.name, ctx, cls, is_init=cls is not None and node.name == "__init__", params=params)
                scopes.append(inner)
                # LibCST counts the calls of decorators and defaults in the function, ast in the
                # enclosing scope: count them in both.
                for call in (n for part in _outside_body(node) for n in ast.walk(part)):
                    if type(call) is ast.Call:
                        inner.calls += 1
                        inner.sets_eval_mode = inner.sets_eval_mode or (
                            type(call.func) is ast.Attribute and call.func.attr in ("eval", "train"))
                for child in node.body:
                    push((child, enclosing, False, inner, False, depth))
                may_hold_tensors = None
                for decorator in node.decorator_list:
                    spelled = _dotted(decorator.func if type(decorator) is ast.Call else decorator)
                    if spelled is not None:
                        facts.decorators.add(spelled)
                        if may_hold_tensors is None:
                            may_hold_tensors = _may_take_or_return_tensors(node, cls is not None)
                        if may_hold_tensors:
                            facts.tensor_function_decorators.add(spelled)
                for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else ()),
                              *getattr(node, "type_params", ())):
                    push((child, enclosing, in_loop, scope, in_lambda, depth))
                continue
            elif kind is ast.ClassDef:
                cls = ClassFacts(node.name, tuple(filter(None, map(_dotted, node.bases))))
                facts.classes.append(cls)
                for child in node.body:
                    if type(child) in _FUNCTIONS:
                        class_of[id(child)] = cls
                        cls.methods.add(child.name)
                for child in children(node):
                    push((child, enclosing, False, scope, in_lambda, depth))
                continue
            elif kind is ast.Lambda:
                for child in children(node):
                    push((child, enclosing, False, scope, True, depth))
                continue
            elif kind in _COMPREHENSIONS:
                # (``[wrapper.test(x) for x in batches]`` calls once per item, as a loop does)
                for child in children(node):
                    push((child, enclosing, True, scope, in_lambda, depth))
                continue
            for child in children(node):
                push((child, enclosing, in_loop, scope, in_lambda, depth))
        if called & facts.function_names:
            keeps.add(CALL_STORE)  # the called function of this file may keep an argument
        if meter_updates and any(METER_CLASS.search(name) for name in (*name_calls, *method_calls)):
            keeps.add(CALL_STORE)  # ``meter = AverageMeter(); meter.update(loss)``
            sites.setdefault(CALL_STORE, []).extend(meter_updates)
        if any(keeps_every_input(target) for target in facts.aliases.values()):
            keeps.add(CALL_STORE)  # ``auroc(preds, y)``: a torchmetrics list state (``Calls.list_state_metric``)
            sites.setdefault(CALL_STORE, []).extend(
                (loops_around, scope_of, in_lambda_of, None) for found in call_sites.values()
                for loops_around, scope_of, in_lambda_of, with_arguments in found if with_arguments)
        for loop in loops:
            if loop.names_in_calls & mode_switched:  # (``Scopes.switched_to_a_mode``: a module, called or handed on)
                loop.feeds_model = True
            if loop.iterable_name in self.made_by_calls:  # ``pbar = tqdm(train_loader)``
                loop.header_identifiers |= frozenset(
                    name for call in self.made_by_calls[loop.iterable_name] for name in _identifiers_of(call))
        facts.depth = deepest
        step_functions = {scope.name for scope in scopes if scope.makes_step and scope.name is not None}
        facts.own_step_functions = set(step_functions)
        for _ in range(2):  # (``Iterations._steps``: a function calling one that steps, two calls deep)
            step_functions |= {scope.name for name in step_functions for _, scope, _, _ in call_sites.get(name, ())
                               if scope.name is not None}
        facts.step_functions = step_functions
        facts.assigning_loops = [loop for loop in loops if loop.assigns]
        # (a step of its own in a function called from a loop: ``loss = train_step(batch)``)
        facts.steps = facts.steps or HOOK in keeps or any(loop.could_be_step_loop for loop in loops) or any(
            name in called_in_loops for name in step_functions)
        # ``_after_eval_call`` needs the eval-mode call and a forward after it in one scope.
        facts.eval_mode_then_call = any(scope.sets_eval_mode and scope.calls >= 2 for scope in scopes)

    def _assignment(self, node: Union[ast.Assign, ast.AugAssign, ast.AnnAssign], enclosing: tuple[LoopFacts, ...],
                    in_loop: bool, scope: "_Scope", in_lambda: bool) -> None:
        facts = self.facts
        keeps, sites = facts.keeps, facts.sites
        kind = type(node)
        if in_loop:
            keeps.add(LOOP_ASSIGNMENT)
            enclosing[-1].assigns = True
            value = node.value
            if kind is ast.Assign and type(value) is ast.Subscript and \
                    DATASET_NAME.search(_terminal_name(value.value) or "") is not None:
                for loop in enclosing:
                    loop.indexes_dataset = True
        targets = node.targets if kind is ast.Assign else [node.target]
        for target in targets:
            _bind(target, scope.bound)
            if kind is not ast.AugAssign and type(target) is ast.Name and node.value is not None and \
                    _held_from(node.value) not in (None, target.id):
                scope.held.add(target.id)
        context = (enclosing, scope, in_lambda)
        if kind is not ast.AnnAssign or node.value is not None:
            carried = [name for target in targets for name in _carried_names(target, scope.params)]
            if carried:
                keeps.add(CARRY_ASSIGNMENT)
            if "self" in carried:
                sites.setdefault(CARRY_ASSIGNMENT, []).append((*context, "self"))
            facts.parameter_carries.extend((*context, name) for name in carried if name != "self")
        if kind is ast.Assign:
            aliased = _callable_spelled(node.value)
            factory = _terminal_name(node.value.func) if type(node.value) is ast.Call else None  # (``self.get_fn()`` too)
            for target in targets:
                if aliased is not None and type(target) is ast.Name:
                    facts.alias_targets.setdefault(target.id, set()).add(aliased)
                if factory is not None and type(target) is ast.Name:
                    facts.alias_targets.setdefault(target.id, set()).add(f"{factory}()")
                if type(target) is ast.Attribute:
                    owner = target.value
                    if target.attr == "requires_grad" and _dotted(owner) != "self":
                        facts.assigns_foreign_requires_grad = True
                    if scope.ctx is not None and type(owner) is ast.Name and owner.id == scope.ctx:
                        scope.cls.stores_on_ctx = True
                elif type(target) in (ast.Tuple, ast.List) and scope.ctx is not None and any(
                        type(e) is ast.Attribute and type(e.value) is ast.Name and e.value.id == scope.ctx
                        for e in target.elts):
                    scope.cls.stores_on_ctx = True  # ``costs, ctx.grads = rnnt_loss(...)``
                elif type(target) is ast.Subscript:
                    keeps.add(SUBSCRIPT_STORE)
                    sites.setdefault(SUBSCRIPT_STORE, []).append((*context, _root(target.value)))
            if len(targets) == 1:
                target, value = targets[0], node.value
                if type(target) is ast.Name and type(value) is ast.Call:
                    self.made_by_calls.setdefault(target.id, []).append(value)
                spelled = _dotted(target)
                if spelled is not None and _may_add_to(value, spelled):
                    keeps.add(ACCUMULATION)
                    sites.setdefault(ACCUMULATION, []).append((*context, _root(target)))
                carried = _accumulator_name(target)
                if carried is not None and any(_joins(call, carried) for call in _join_candidates(value)):
                    keeps.add(JOIN)
                    sites.setdefault(JOIN, []).append((*context, _root(target)))
        elif kind is ast.AugAssign:
            if type(node.value) is ast.List:
                if type(node.op) is ast.Add and node.value.elts:
                    keeps.add(LIST_STORE)
                    sites.setdefault(LIST_STORE, []).append((*context, _root(node.target)))
            elif type(node.op) in (ast.Add, ast.Sub, ast.Mult):
                keeps.add(ACCUMULATION)
                sites.setdefault(ACCUMULATION, []).append((*context, _root(node.target)))


def _may_add_to(value: ast.AST, spelled: str) -> bool:
    """``t + v``, ``v if t is None else t + v`` or ``tuple(map(sum, zip(t, v)))`` (a superset of
    what ``Stores`` takes for an accumulation into ``t``)."""
    kind = type(value)
    if kind is ast.BinOp:
        return spelled in (_dotted(value.left), _dotted(value.right))
    if kind is ast.IfExp:
        return _may_add_to(value.body, spelled) or _may_add_to(value.orelse, spelled)
    if kind is ast.Call and type(value.func) is ast.Name and value.func.id in ("tuple", "list") and value.args:
        mapped = value.args[0]  # ``map(sum, zip(t, v))``
        return type(mapped) is ast.Call and type(mapped.func) is ast.Name and mapped.func.id == "map" and \
            any(_dotted(node) == spelled for node in ast.walk(mapped))
    return False


def _identifiers_of(expr: ast.AST) -> Iterator[str]:
    """The names, attributes and keywords an expression spells (those LibCST's code of it shows)."""
    for node in ast.walk(expr):
        kind = type(node)
        if kind is ast.Name:
            yield node.id
        elif kind is ast.Attribute:
            yield node.attr
        elif kind is ast.keyword and node.arg is not None:
            yield node.arg


# Calls that may be ``torch.autograd.grad``/``backward`` (a backward pass, in the semantic layer).
_AUTOGRAD_FUNCTIONS = frozenset({"grad", "backward"})
# Methods of an autograd Function that receive ``ctx`` first.
_CTX_METHODS = frozenset({"forward", "setup_context"})


@dataclass(eq=False)
class _Scope:
    """The function a node is in (None: the module), as the semantic layer sees it
    (``Scopes.function_of``: classes and lambdas do not start one)."""

    name: Optional[str]
    ctx: Optional[str] = None  # the ``ctx`` parameter of an autograd Function's method
    cls: Optional[ClassFacts] = None  # the class it is a method of
    is_init: bool = False
    params: frozenset[str] = frozenset()
    calls: int = 0
    sets_eval_mode: bool = False
    makes_step: bool = False  # a backward, an optimizer or environment step in it
    # Names its body binds by assignment or as a loop target (a subset of ``Scopes.bindings``),
    # and those it declares ``global``/``nonlocal``.
    bound: set[str] = field(default_factory=set)
    declared: set[str] = field(default_factory=set)
    # Names bound to what another name holds (``entry = self.sums.setdefault(k, {})``, ``for
    # meter in self.meters.values()``): a container reached through them lives where that one
    # does (``Stores._persistent_root``).
    held: set[str] = field(default_factory=set)


def _carried_names(target: ast.AST, params: frozenset[str]) -> list[str]:
    """``self`` (for ``self.x``) and the parameters among an assignment's targets (unpacked tuples
    included): what a function run once per step can carry to its next call
    (``LoopCarried.chains``)."""
    if type(target) in (ast.Tuple, ast.List):
        return [name for element in target.elts for name in _carried_names(element, params)]
    if type(target) is ast.Starred:
        return _carried_names(target.value, params)
    if type(target) is ast.Name:
        return [target.id] if target.id in params else []
    carried = _carried_name(target)
    return ["self"] if carried is not None and carried.startswith("self.") else []


def _bind(target: ast.AST, bound: set[str]) -> None:
    """The names an assignment or loop target binds (unpacked tuples included)."""
    if type(target) is ast.Name:
        bound.add(target.id)
    elif type(target) in (ast.Tuple, ast.List):
        for element in target.elts:
            _bind(element, bound)
    elif type(target) is ast.Starred:
        _bind(target.value, bound)


def _local_of(scope: "_Scope", root: Optional[str]) -> bool:
    """A container hanging from ``root`` is a local of the function (bound in it, a parameter
    rebound too: ``Stores.outlives``, ``_persistent_root``), which dies with each call."""
    return root is not None and root != "self" and root in scope.bound and root not in scope.declared and \
        root not in scope.held


def _held_from(value: ast.AST) -> Optional[str]:
    """The name ``value`` hangs from, through attributes, items and the item getters and views
    of a dict (``self.sums.setdefault(k, {})``, ``self.meters.values()``), as ``Stores`` follows
    a local bound to it."""
    while type(value) is ast.Call and type(value.func) is ast.Attribute and \
            value.func.attr in ("setdefault", "get", "values", "items"):
        value = value.func.value
    return _root(value)


def _callable_spelled(value: ast.AST) -> Optional[str]:
    """The function an alias may be bound to, as ``Calls._resolve_name`` follows it: ``f``,
    ``obj.f`` or ``partial(f, ...)``."""
    if type(value) is ast.Call:  # (any call: ``partial`` may be imported under another name)
        if not value.args:
            return None
        value = value.args[0]
    return _terminal_name(value)


def _root(node: ast.AST) -> Optional[str]:
    """As ``scopes.root_name``, or None where it may differ: the name a container hangs from
    (``self`` for ``self.history[k]``)."""
    while type(node) is ast.Attribute or type(node) is ast.Subscript:
        node = node.value
    return node.id if type(node) is ast.Name else None


def _may_take_or_return_tensors(function: Union[ast.FunctionDef, ast.AsyncFunctionDef], in_class: bool) -> bool:
    """Not ruled out by what the code says: a method (of a class that may be a module, unless
    static), a parameter unannotated or annotated with anything naming a tensor or a module, or
    no return annotation made only of ``NON_TENSOR_ANNOTATIONS`` (``-> bool``,
    ``-> tuple[int, int]``)."""
    if in_class and not any(_dotted(d) == "staticmethod" for d in function.decorator_list):
        return True
    signature = function.args
    for argument in (*signature.posonlyargs, *signature.args, *signature.kwonlyargs):
        if argument.annotation is None and argument.arg not in ("self", "cls") or argument.annotation is not None and \
                any(word in ast.unparse(argument.annotation) for word in ("Tensor", "Module")):
            return True  # (an unannotated parameter may be given a module by a call of the file)
    returns = function.returns
    if returns is None:
        return True
    names = []
    for part in ast.walk(returns):
        if type(part) is ast.Name:
            names.append(part.id)
        elif type(part) in (ast.Attribute, ast.Call, ast.Lambda) or type(part) is ast.Constant and \
                isinstance(part.value, str):
            return True  # ``torch.Tensor``, ``"Output"``: anything not spelled out as a builtin
    return not names or not all(name in NON_TENSOR_ANNOTATIONS for name in names)


def _outside_body(function: Union[ast.FunctionDef, ast.AsyncFunctionDef]) -> list[ast.AST]:
    """The decorators, defaults and annotations of a function that may hold calls."""
    signature = function.args
    parameters = (*signature.posonlyargs, *signature.args, *signature.kwonlyargs,
                  *filter(None, (signature.vararg, signature.kwarg)))
    parts = [*function.decorator_list, *signature.defaults, *filter(None, signature.kw_defaults),
             *(p.annotation for p in parameters if p.annotation is not None), function.returns]
    return [part for part in parts if part is not None and not isinstance(part, ast.Constant) and _dotted(part) is None]


def _carried_name(node: ast.AST) -> Optional[str]:
    """As ``loop_carried.carried_name``: ``h`` for a name, ``self.h`` for an attribute of self."""
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _accumulator_name(node: ast.AST) -> Optional[str]:
    """As ``scopes.accumulator_name``: ``_carried_name``, or a slot of one keyed by a name
    or a literal (``self.data["preds"]``), spelled out."""
    name = _carried_name(node)
    if name is not None or type(node) is not ast.Subscript:
        return name
    base, index = _carried_name(node.value), node.slice
    if base is None or type(index) not in (ast.Name, ast.Constant):
        return None
    return f"{base}[{index.id if type(index) is ast.Name else repr(index.value)}]"


def _join_candidates(value: ast.AST) -> list[ast.AST]:
    if type(value) is ast.IfExp:  # ``x if acc is None else torch.cat([acc, x])``
        return [value.body, value.orelse]
    return [value]


def _joins(call: ast.AST, name: str) -> bool:
    """``f([name, x])``/``f((x, name))`` (or the list as a keyword): the shape of a join into
    ``name``, whatever ``f`` is (``Stores.join_accumulations`` resolves it)."""
    if type(call) is not ast.Call:
        return False
    for pieces in (*call.args[:1], *(k.value for k in call.keywords)):
        if type(pieces) in (ast.List, ast.Tuple) and len(pieces.elts) == 2 and any(
            _accumulator_name(e.value if type(e) is ast.Starred else e) == name for e in pieces.elts
        ):
            return True
    return False


# The node types the walk looks at; the others only pass their context on to their children.
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_HANDLED = frozenset({
    ast.Attribute, ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.withitem, ast.Import,
    ast.ImportFrom, ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
    ast.Lambda, ast.Global, ast.Nonlocal, ast.Return, *_COMPREHENSIONS,
})
# Children that nothing here looks at or below: leaves, and the context/operator markers.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue,
                     *ast.operator.__subclasses__(), *ast.unaryop.__subclasses__(), *ast.cmpop.__subclasses__(),
                     *ast.boolop.__subclasses__()})
# Fields that never hold a node to walk: markers, and identifiers, numbers and flags.
_SCALAR_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "module", "level", "type_comment",
                            "conversion", "simple", "is_async", "kind"})
_child_fields_by_type: dict[type, tuple[str, ...]] = {}
_walked_type: dict[type, bool] = {}  # a node type that is walked (not a leaf, not a non-node value)


def _is_walked(kind: type) -> bool:
    walked = _walked_type[kind] = kind not in _LEAVES and issubclass(kind, ast.AST)
    return walked


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without the leaves (about a third of the nodes)."""
    kind = type(node)
    fields = _child_fields_by_type.get(kind)
    if fields is None:
        fields = _child_fields_by_type[kind] = tuple(f for f in kind._fields if f not in _SCALAR_FIELDS)
    found: list[ast.AST] = []
    append, walked_type = found.append, _walked_type
    for name in fields:
        value = getattr(node, name, None)
        value_type = type(value)
        if value_type is list:
            for item in value:
                walked = walked_type.get(type(item))
                if walked or (walked is None and _is_walked(type(item))):
                    append(item)
        elif value is not None:
            walked = walked_type.get(value_type)
            if walked or (walked is None and _is_walked(value_type)):
                append(value)
    return found


def _terminal_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
