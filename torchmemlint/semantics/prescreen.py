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
from typing import Optional, Union

from torchmemlint.diagnostics import FileError
from torchmemlint.semantics.vocabulary import (
    ITERATION_BUILTINS, PER_STEP_METHODS, STORING_METHODS, is_step_call, is_step_identifier,
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# PEP 263 (and the BOM): how the file's bytes become text, as CPython and LibCST decode them.
_CODING_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class LoopFacts:
    """A ``for``/``while`` loop: the identifiers of its header (comments and string contents
    included, a superset of what the semantic layer reads there) and whether its body makes a
    training step (a backward or an optimizer step)."""

    is_for: bool
    header_identifiers: frozenset[str]
    while_true: bool = False
    has_step_call: bool = False

    @property
    def could_be_step_loop(self) -> bool:
        """``Scopes.is_step_loop`` may hold for this loop."""
        return self.while_true or self.has_step_call or any(
            is_step_identifier(name) for name in self.header_identifiers if name not in ITERATION_BUILTINS
        )


@dataclass
class StoreSite:
    """A store into a container (``c.append(v)``, ``c[k] = v``, ``c += [v]``) or an
    accumulation (``t += v``, ``t = t + v``), with the innermost loop around it in its function
    (body only) and the method it is directly in, when it is a method that could run once per
    step."""

    kind: str  # "call", "subscript", "list", "accumulation"
    loop: Optional[LoopFacts]
    in_step_method: bool

    @property
    def could_be_in_step_iteration(self) -> bool:
        """``Scopes.iteration_scope`` may be a step loop or a per-step method here."""
        if self.loop is not None:
            return self.loop.could_be_step_loop
        return self.in_step_method


@dataclass
class FileFacts:
    """What one walk over a file's ``ast`` saw."""

    source: bytes
    method_calls: set[str] = field(default_factory=set)  # ``x.name(...)``
    name_calls: set[str] = field(default_factory=set)  # ``name(...)``
    function_names: set[str] = field(default_factory=set)
    functions_with_loops: set[str] = field(default_factory=set)
    for_header_identifiers: set[str] = field(default_factory=set)
    stores: list[StoreSite] = field(default_factory=list)
    calls_train_false: bool = False  # ``m.train(False)``: evaluation mode

    def contains(self, text: str) -> bool:
        return text.encode() in self.source


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
    facts = FileFacts(source)
    try:
        _Walker(facts, text).walk(tree)
    except RecursionError:
        return FileError(path, "file is nested too deeply to parse")
    return facts


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
    """An iterative depth-first walk that knows, at each node, the innermost loop whose body it
    is in (within its function), the enclosing loops, and the enclosing function."""

    def __init__(self, facts: FileFacts, text: str) -> None:
        self.facts = facts
        self.lines = text.splitlines()

    def _header(self, loop: Union[ast.For, ast.AsyncFor, ast.While]) -> LoopFacts:
        # The header's whole text, from the ``for``/``while`` line to the first body line:
        # every identifier, comment word or string word that LibCST's view of the iterable
        # can contain is in it.
        # (A body on the header's own line comes with it: a superset still.)
        text = "\n".join(self.lines[loop.lineno - 1:max(loop.body[0].lineno - 1, loop.lineno)])
        identifiers = frozenset(_IDENTIFIER.findall(text))
        is_for = not isinstance(loop, ast.While)
        while_true = not is_for and isinstance(loop.test, ast.Constant) and loop.test.value is True
        return LoopFacts(is_for, identifiers, while_true)

    def walk(self, tree: ast.Module) -> None:
        facts = self.facts
        method_calls, name_calls, stores = facts.method_calls, facts.name_calls, facts.stores
        # (node, innermost loop of this function whose body holds it, every enclosing loop,
        #  the enclosing function, whether that function is a method that may run per step)
        stack: list[tuple[ast.AST, Optional[LoopFacts], tuple[LoopFacts, ...], Optional[_Function], bool]] = [
            (tree, None, (), None, False)
        ]
        pop, push = stack.pop, stack.append
        iter_children = ast.iter_child_nodes
        methods: set[int] = set()  # ids of functions defined directly in a class body
        while stack:
            node, loop, enclosing, function, step_method = pop()
            kind = type(node)
            if kind is ast.Call:
                func = node.func
                if type(func) is ast.Attribute:
                    name = func.attr
                    method_calls.add(name)
                    if name in STORING_METHODS and node.args:
                        stores.append(StoreSite("call", loop, step_method))
                    elif name == "train" and any(
                        isinstance(a, ast.Constant) and a.value is False
                        for a in (*node.args, *(k.value for k in node.keywords))
                    ):
                        facts.calls_train_false = True
                    if is_step_call(name, _dotted(func.value)):
                        for outer in enclosing:
                            outer.has_step_call = True
                elif type(func) is ast.Name:
                    name_calls.add(func.id)
            elif kind is ast.Assign:
                if any(type(t) is ast.Subscript for t in node.targets):
                    stores.append(StoreSite("subscript", loop, step_method))
                if len(node.targets) == 1 and type(node.value) is ast.BinOp:
                    spelled = _dotted(node.targets[0])
                    if spelled is not None and spelled in (_dotted(node.value.left), _dotted(node.value.right)):
                        stores.append(StoreSite("accumulation", loop, step_method))
            elif kind is ast.AugAssign:
                if type(node.value) is ast.List:
                    if type(node.op) is ast.Add and node.value.elts:
                        stores.append(StoreSite("list", loop, step_method))
                elif type(node.op) in (ast.Add, ast.Sub, ast.Mult):
                    stores.append(StoreSite("accumulation", loop, step_method))
            elif kind in (ast.For, ast.AsyncFor, ast.While):
                header = self._header(node)
                if header.is_for:
                    facts.for_header_identifiers.update(header.header_identifiers)
                if function is not None:
                    facts.functions_with_loops.add(function.name)
                inner = (*enclosing, header)
                for child in reversed(node.body):
                    push((child, header, inner, function, step_method))
                for child in node.orelse:
                    push((child, loop, enclosing, function, step_method))
                headers = (node.target, node.iter) if header.is_for else (node.test,)
                for child in headers:
                    push((child, loop, enclosing, function, step_method))
                continue
            elif kind in (ast.FunctionDef, ast.AsyncFunctionDef):
                facts.function_names.add(node.name)
                # Only a method (directly in a class body) is a per-step method.
                is_step = id(node) in methods and (node.name in PER_STEP_METHODS or node.name == "forward")
                for child in reversed(node.body):
                    push((child, None, enclosing, node, is_step))
                for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else ())):
                    push((child, loop, enclosing, function, step_method))
                continue
            elif kind is ast.ClassDef:
                # A class body's own statements still belong to the enclosing function, but
                # no loop around the class holds them.
                methods.update(id(child) for child in node.body if type(child) in _FUNCTIONS)
                for child in iter_children(node):
                    push((child, None, enclosing, function, step_method))
                continue
            elif kind is ast.Lambda:
                for child in iter_children(node):
                    push((child, None, enclosing, function, step_method))
                continue
            for child in iter_children(node):
                push((child, loop, enclosing, function, step_method))
