"""The pre-screen: one parse with Python's own ``ast`` (several times faster than LibCST's parser)
and one walk that records what a rule can match on, so that LibCST parsing and the semantic
model are spent only on files where some selected rule could report something.

The facts are deliberately coarse supersets of what the rules look for: a rule's
``could_match(facts)`` may say yes where ``check`` then finds nothing, never the reverse.
The same parse gives syntax errors with CPython's own message and position.

This module must not import LibCST: a run whose files all fail the pre-screen never loads it.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Union

from torchmemlint.diagnostics import FileError
from torchmemlint.semantics.vocabulary import (
    IN_PLACE_WRITES, ITERATION_BUILTINS, METER_CLASS, METER_METHODS, PER_STEP_METHODS, STORING_METHODS, is_step_identifier,
    is_step_target, makes_training_step, steps_environment,
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# PEP 263 (and the BOM): how the file's bytes become text, as CPython and LibCST decode them.
_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class LoopFacts:
    """A ``for``/``while`` loop: the identifiers of its header (target and iterable, with
    comments and strings: a superset of what the semantic layer reads there) and whether its body
    (nested functions included: a superset again) makes a training step."""

    header_identifiers: frozenset[str]
    while_true: bool = False
    has_step_call: bool = False  # a backward, an optimizer or environment step, autograd.grad
    iterable_name: Optional[str] = None  # ``for b in pbar``: its identifiers join those of ``pbar = ...``

    @property
    def could_be_step_loop(self) -> bool:
        """``Scopes.is_step_loop`` may hold for this loop."""
        return self.while_true or self.has_step_call or any(
            (is_step_identifier(name) and name not in ITERATION_BUILTINS) or is_step_target(name)
            for name in self.header_identifiers
        )


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
SELF_ASSIGNMENT = "self"  # ``self.x = ...`` in a method other than ``__init__``
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
    facts.statement_lines = [min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
                             for statement in tree.body]
    try:
        _Walker(facts, text).walk(tree)
    except RecursionError:
        return FileError(path, "file is nested too deeply to parse")
    return facts


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
        self.made_by_calls: dict[str, frozenset[str]] = {}  # ``name = call(...)``: the call's identifiers

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
        # (node, every loop around it, whether a loop of its own function holds it, its function)
        stack: list[tuple[ast.AST, tuple[LoopFacts, ...], bool, _Scope]] = [(tree, (), False, _Scope(None))]
        pop, push = stack.pop, stack.append
        children = _children
        class_of: dict[int, ClassFacts] = {}  # id of a function defined directly in a class body
        loops: list[LoopFacts] = []
        called: set[str] = set()
        called_in_loops: set[str] = set()  # names called inside a loop
        meter_updates = False
        scopes = [stack[0][3]]
        while stack:
            node, enclosing, in_loop, scope = pop()
            kind = type(node)
            if kind not in _HANDLED:
                for child in children(node):
                    push((child, enclosing, in_loop, scope))
                continue
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
                    if name in STORING_METHODS and node.args:
                        keeps.add(CALL_STORE)
                    elif name in METER_METHODS and node.args:
                        meter_updates = True  # a store only if a meter class is made here (below)
                    elif name in IN_PLACE_WRITES and node.args:
                        keeps.add(IN_PLACE_WRITE)
                    elif name == "eval" or name == "train" and any(
                        isinstance(a, ast.Constant) and a.value is False
                        for a in (*node.args, *(k.value for k in node.keywords))
                    ):
                        scope.sets_eval_mode = True
                    elif name in _AUTOGRAD_FUNCTIONS or makes_training_step(name, _dotted(func.value)) \
                            or steps_environment(name, _terminal_name(func.value)):
                        scope.makes_step = True
                        for loop in enclosing:
                            loop.has_step_call = True
                elif type(func) is ast.Name:
                    name = func.id
                    name_calls.add(name)
                    if name in _AUTOGRAD_FUNCTIONS:  # may be an aliased ``torch.autograd.grad``
                        for loop in enclosing:
                            loop.has_step_call = True
                else:
                    name = ""
                if node.args or node.keywords:
                    called.add(name)
                if in_loop:
                    called_in_loops.add(name)
                if name.startswith("register_") and "hook" in name:
                    keeps.add(HOOK)
            elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
                self._assignment(node, in_loop, scope)
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
            elif kind in _LOOPS:
                header = self._header(node)
                loops.append(header)
                if kind is not ast.While:
                    facts.for_iterable_identifiers.update(self._iterable_identifiers(node))
                for child in node.body:
                    push((child, (*enclosing, header), True, scope))
                for child in (*node.orelse, *((node.test,) if kind is ast.While else (node.target, node.iter))):
                    push((child, enclosing, in_loop, scope))
                continue
            elif kind in _FUNCTIONS:
                facts.function_names.add(node.name)
                cls = class_of.get(id(node))
                if cls is not None and (node.name in PER_STEP_METHODS or node.name == "forward"):
                    facts.steps = True
                arguments = (*node.args.posonlyargs, *node.args.args)
                ctx = arguments[0].arg if cls is not None and arguments and node.name in _CTX_METHODS else None
                inner = _Scope(node.name, ctx, cls, is_init=cls is not None and node.name == "__init__")
                scopes.append(inner)
                # LibCST counts the calls of decorators and defaults in the function, ast in the
                # enclosing scope: count them in both.
                for call in (n for part in _outside_body(node) for n in ast.walk(part)):
                    if type(call) is ast.Call:
                        inner.calls += 1
                        inner.sets_eval_mode = inner.sets_eval_mode or (
                            type(call.func) is ast.Attribute and call.func.attr in ("eval", "train"))
                for child in node.body:
                    push((child, enclosing, False, inner))
                for decorator in node.decorator_list:
                    spelled = _dotted(decorator.func if type(decorator) is ast.Call else decorator)
                    if spelled is not None:
                        facts.decorators.add(spelled)
                for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else ())):
                    push((child, enclosing, in_loop, scope))
                continue
            elif kind is ast.ClassDef:
                cls = ClassFacts(node.name, tuple(filter(None, map(_dotted, node.bases))))
                facts.classes.append(cls)
                for child in node.body:
                    if type(child) in _FUNCTIONS:
                        class_of[id(child)] = cls
                        cls.methods.add(child.name)
                for child in children(node):
                    push((child, enclosing, False, scope))
                continue
            elif kind is ast.Lambda:
                for child in children(node):
                    push((child, enclosing, False, scope))
                continue
            for child in children(node):
                push((child, enclosing, in_loop, scope))
        if called & facts.function_names:
            keeps.add(CALL_STORE)  # the called function of this file may keep an argument
        if meter_updates and any(METER_CLASS.search(name) for name in (*name_calls, *method_calls)):
            keeps.add(CALL_STORE)  # ``meter = AverageMeter(); meter.update(loss)``
        for loop in loops:
            if loop.iterable_name in self.made_by_calls:  # ``pbar = tqdm(train_loader)``
                loop.header_identifiers |= self.made_by_calls[loop.iterable_name]
        # (a step of its own in a function called from a loop: ``loss = train_step(batch)``)
        facts.steps = facts.steps or HOOK in keeps or any(loop.could_be_step_loop for loop in loops) or any(
            scope.makes_step and scope.name in called_in_loops for scope in scopes)
        # ``_after_eval_call`` needs the eval-mode call and a forward after it in one scope.
        facts.eval_mode_then_call = any(scope.sets_eval_mode and scope.calls >= 2 for scope in scopes)

    def _assignment(self, node: Union[ast.Assign, ast.AugAssign, ast.AnnAssign], in_loop: bool,
                    scope: "_Scope") -> None:
        facts = self.facts
        keeps = facts.keeps
        kind = type(node)
        if in_loop:
            keeps.add(LOOP_ASSIGNMENT)
        targets = node.targets if kind is ast.Assign else [node.target]
        if scope.cls is not None and not scope.is_init and (kind is not ast.AnnAssign or node.value is not None) and \
                any(_assigns_self_attribute(target) for target in targets):
            keeps.add(SELF_ASSIGNMENT)
        if kind is ast.Assign:
            for target in targets:
                if type(target) is ast.Attribute:
                    owner = target.value
                    if target.attr == "requires_grad" and _dotted(owner) != "self":
                        facts.assigns_foreign_requires_grad = True
                    if scope.ctx is not None and type(owner) is ast.Name and owner.id == scope.ctx:
                        scope.cls.stores_on_ctx = True
                elif type(target) is ast.Subscript:
                    keeps.add(SUBSCRIPT_STORE)
            if len(targets) == 1:
                target, value = targets[0], node.value
                if type(target) is ast.Name and type(value) is ast.Call:
                    self.made_by_calls[target.id] = self.made_by_calls.get(target.id, frozenset()) | \
                        frozenset(_identifiers_of(value))
                spelled = _dotted(target)
                if type(value) is ast.BinOp and spelled is not None and spelled in (_dotted(value.left), _dotted(value.right)):
                    keeps.add(ACCUMULATION)
                carried = _carried_name(target)
                if carried is not None and any(_joins(call, carried) for call in _join_candidates(value)):
                    keeps.add(JOIN)
        elif kind is ast.AugAssign:
            if type(node.value) is ast.List:
                if type(node.op) is ast.Add and node.value.elts:
                    keeps.add(LIST_STORE)
            elif type(node.op) in (ast.Add, ast.Sub, ast.Mult):
                keeps.add(ACCUMULATION)


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


@dataclass
class _Scope:
    """The function a node is in (None: the module), as the semantic layer sees it
    (``Scopes.function_of``: classes and lambdas do not start one)."""

    name: Optional[str]
    ctx: Optional[str] = None  # the ``ctx`` parameter of an autograd Function's method
    cls: Optional[ClassFacts] = None  # the class it is a method of
    is_init: bool = False
    calls: int = 0
    sets_eval_mode: bool = False
    makes_step: bool = False  # a backward, an optimizer or environment step in it


def _assigns_self_attribute(target: ast.AST) -> bool:
    """``self.x`` among an assignment's targets (unpacked tuples included)."""
    if type(target) in (ast.Tuple, ast.List):
        return any(_assigns_self_attribute(element) for element in target.elts)
    if type(target) is ast.Starred:
        return _assigns_self_attribute(target.value)
    return _carried_name(target) is not None and _carried_name(target).startswith("self.")


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


def _join_candidates(value: ast.AST) -> list[ast.AST]:
    if type(value) is ast.IfExp:  # ``x if acc is None else torch.cat([acc, x])``
        return [value.body, value.orelse]
    return [value]


def _joins(call: ast.AST, name: str) -> bool:
    """``f([name, x])``/``f((x, name))`` (or the list as a keyword): the shape of a join into
    ``name``, whatever ``f`` is (``LoopCarried.join_accumulations`` resolves it)."""
    if type(call) is not ast.Call:
        return False
    for pieces in (*call.args[:1], *(k.value for k in call.keywords)):
        if type(pieces) in (ast.List, ast.Tuple) and len(pieces.elts) == 2 and any(
            _carried_name(e.value if type(e) is ast.Starred else e) == name for e in pieces.elts
        ):
            return True
    return False


# The node types the walk looks at; the others only pass their context on to their children.
_HANDLED = frozenset({
    ast.Attribute, ast.Call, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.withitem, ast.Import,
    ast.ImportFrom, ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
    ast.Lambda,
})
# Children that nothing here looks at or below: leaves, and the context/operator markers.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue,
                     *ast.operator.__subclasses__(), *ast.unaryop.__subclasses__(), *ast.cmpop.__subclasses__(),
                     *ast.boolop.__subclasses__()})
_child_fields_by_type: dict[type, tuple[str, ...]] = {}


def _children(node: ast.AST) -> list[ast.AST]:
    """``ast.iter_child_nodes`` without the leaves (about a third of the nodes)."""
    kind = type(node)
    fields = _child_fields_by_type.get(kind)
    if fields is None:
        fields = _child_fields_by_type[kind] = tuple(f for f in kind._fields if f not in ("ctx", "op", "ops"))
    found = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(item for item in value if type(item) not in _LEAVES and isinstance(item, ast.AST))
        elif value is not None and type(value) not in _LEAVES and isinstance(value, ast.AST):
            found.append(value)
    return found


def _terminal_name(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None
