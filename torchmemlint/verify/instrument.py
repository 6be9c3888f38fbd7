"""Cap the iteration scope around a finding: the replay's only change to the user's code.

The *iteration scope* of a line is the innermost ``for``/``while`` loop whose body contains it,
or, when the line is in a function with no such loop inside it (``training_step``, ``forward``,
a helper called once per step), that function: every call is one iteration.

The rewrite keeps every line where it was, so tracebacks, ``# expect`` comments and the
creation lines the meters record all point at the user's own lines:

- ``for x in ITER:``  becomes ``for x in __torchmemlint_replay__.iterate(ITER):``
- ``while COND:``     becomes ``while __torchmemlint_replay__.check(COND):``
- a function's first statement ``S`` becomes ``__torchmemlint_replay__.enter(None); S``
  (or, when it is a compound statement, its header expression ``E`` becomes
  ``__torchmemlint_replay__.enter(E)``);
- a *workers* scope (TML010: CUDA in DataLoader worker code) changes nothing: the replay runs
  the script as it is and watches its worker processes' device memory;
- a one-shot *statement* scope (a one-time cost such as ``torch.load``) ``S`` becomes
  ``__torchmemlint_replay__.enter(None); S; __torchmemlint_replay__.enter(None)``: boundary 0
  just before it, boundary 1 just after it, and the replay stops there (a cap of 1).

The scope is the one the rule named when the diagnostic carries it (``Diagnostic.iteration``,
an ``IterationSpan``): ``scope_of_span``; otherwise ``find_iteration_scope`` derives it from
the line.

``__torchmemlint_replay__`` is the harness's ``ReplayController``, installed in ``builtins``
so that the script needs no extra import line. It ends the replay by raising ``StopReplay``
(a ``BaseException``, which a user's ``except Exception:`` does not swallow).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

CONTROLLER = "__torchmemlint_replay__"

ScopeNode = Union[cst.For, cst.While, cst.FunctionDef]


class InstrumentError(Exception):
    """The scope around a line cannot be replayed; the message says why."""


@dataclass(frozen=True)
class IterationScope:
    """Where a finding's iterations happen. ``index`` counts nodes of the same ``kind`` in
    pre-order, so that the same scope can be found again in the fixed twin, whose lines may
    have moved."""

    kind: str  # "for", "while", "function", "statement" (one-shot; ``index`` is its line) or "workers"
    index: int
    line: int  # line of the loop or ``def`` header
    name: str = ""  # the function's name for "function" scopes


_KINDS = {cst.For: "for", cst.While: "while", cst.FunctionDef: "function"}


@dataclass(frozen=True)
class _Found:
    node: ScopeNode
    kind: str
    index: int
    first: int  # the lines that belong to the scope: a loop's body; a function's decorators to its end
    last: int
    header: int  # the line of the ``for``/``while``/``def`` keyword
    start: int  # where the node starts (a function's first decorator): an ``IterationSpan``'s line
    function: Optional[cst.FunctionDef]  # the innermost function around it


class _Scopes(cst.CSTVisitor):
    """Every loop and function, in pre-order, with the lines that belong to it."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.found: list[_Found] = []
        self._counts = {"for": 0, "while": 0, "function": 0}
        self._functions: list[cst.FunctionDef] = []

    def _add(self, node: ScopeNode) -> None:
        kind = _KINDS[type(node)]
        whole = self.get_metadata(PositionProvider, node)
        lines = whole if isinstance(node, cst.FunctionDef) else self.get_metadata(PositionProvider, node.body)
        header = whole.start.line
        if isinstance(node, cst.FunctionDef) and node.decorators:
            header = self.get_metadata(PositionProvider, node.name).start.line
            lines = self.get_metadata(PositionProvider, node.decorators[0]).start.line, whole.end.line
        else:
            lines = lines.start.line, lines.end.line
        function = self._functions[-1] if self._functions else None
        self.found.append(_Found(node, kind, self._counts[kind], lines[0], lines[1], header, whole.start.line,
                                 function))
        self._counts[kind] += 1

    def visit_For(self, node: cst.For) -> None:
        self._add(node)

    def visit_While(self, node: cst.While) -> None:
        self._add(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._add(node)
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()


def _scopes(module: cst.Module) -> list[_Found]:
    collector = _Scopes()
    MetadataWrapper(module, unsafe_skip_copy=True).visit(collector)
    return collector.found


def find_iteration_scope(source: str, line: int) -> IterationScope:
    """The iteration scope of ``line`` (1-based): the innermost loop whose body holds it; else,
    for setup code before a loop (``model.requires_grad = False``, ``torch.no_grad()`` alone on
    a line), the first loop that follows it in the same function or at module level, or the
    first loop nested in that one (the step loop inside an epoch loop); else the innermost
    function around it (``forward``, ``training_step``, a decorated ``def``): each call is one
    iteration."""
    found = _scopes(_parse(source))
    enclosing = [f for f in found if f.first <= line <= f.last]
    innermost = enclosing[-1] if enclosing else None  # pre-order: the innermost comes last
    if innermost is None or (innermost.kind == "function" and line > innermost.header):
        function = innermost.node if innermost else None
        following = _next_loop(found, line, function)
        if following is not None:
            innermost = following
    if innermost is None:
        raise InstrumentError("not inside a loop or a function, and no loop follows it: nothing repeats")
    if isinstance(innermost.node, cst.For) and innermost.node.asynchronous is not None:
        raise InstrumentError("`async for` loops are not replayed")
    name = innermost.node.name.value if isinstance(innermost.node, cst.FunctionDef) else ""
    return IterationScope(innermost.kind, innermost.index, innermost.header, name)


def scope_of_span(source: str, kind: str, line: int, end_line: int) -> IterationScope:
    """The scope a rule named (an ``IterationSpan``: kind, first and last line of the loop or
    function), as an ``IterationScope`` of this file."""
    if kind not in ("for", "while", "function"):
        raise InstrumentError(f"a `{kind}` iteration cannot be capped")
    for found in _scopes(_parse(source)):
        # a loop's span starts at its keyword; a function's at its first decorator or at ``def``
        starts = (found.start, found.first, found.header) if kind == "function" else (found.header,)
        if found.kind == kind and line in starts and found.last == end_line:
            if isinstance(found.node, cst.For) and found.node.asynchronous is not None:
                raise InstrumentError("`async for` loops are not replayed")
            name = found.node.name.value if isinstance(found.node, cst.FunctionDef) else ""
            return IterationScope(kind, found.index, found.header, name)
    raise InstrumentError(f"no `{kind}` scope at lines {line}-{end_line}")


def statement_scope(source: str, line: int) -> IterationScope:
    """The one-shot scope of the simple statement line at ``line``."""
    if _statement_at(_parse(source), line) is None:
        raise InstrumentError(f"line {line} is not a simple statement: a one-time cost there cannot be measured")
    return IterationScope("statement", line, line)


class _StatementLines(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.found: Optional[cst.SimpleStatementLine] = None

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        where = self.get_metadata(PositionProvider, node)
        if where.start.line == self.line == where.end.line and self.found is None:
            self.found = node


def _statement_at(module: cst.Module, line: int) -> Optional[cst.SimpleStatementLine]:
    finder = _StatementLines(line)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(finder)
    return finder.found


def _next_loop(found: list[_Found], line: int, function: Optional[cst.FunctionDef]) -> Optional[_Found]:
    """The first loop directly in ``function`` (None: the module) that starts after ``line``,
    then down its first nested loops."""
    loops = [f for f in found if f.kind != "function" and f.function is function]
    following = [f for f in loops if f.header > line]
    if not following:
        return None
    chosen = following[0]
    while True:
        nested = [f for f in loops if chosen.first <= f.header <= chosen.last]
        if not nested:
            return chosen
        chosen = nested[0]


def instrument(source: str, scope: IterationScope) -> str:
    """``source`` with ``scope`` capped by the replay controller; same number of lines, and
    every line other than the scope's header (or first statement) unchanged."""
    module = _parse(source)
    if scope.kind == "workers":  # nothing to cap: the replay watches the workers' device memory
        return source
    if scope.kind == "statement":
        statement = _statement_at(module, scope.line)
        if statement is None:
            raise InstrumentError(f"the fixed code has no simple statement at line {scope.line} any more")
        return _checked(source, module.visit(_Capper(statement)).code)
    matches = [f.node for f in _scopes(module) if f.kind == scope.kind and f.index == scope.index]
    if not matches:
        raise InstrumentError(f"the fixed code has no {scope.kind} scope #{scope.index} any more")
    target = matches[0]
    if scope.kind == "function" and target.name.value != scope.name:
        raise InstrumentError(f"the fixed code's function #{scope.index} is not `{scope.name}`")
    return _checked(source, module.visit(_Capper(target)).code)


def _checked(source: str, result: str) -> str:
    if result.count("\n") != source.count("\n"):
        raise InstrumentError("instrumenting would move lines")  # a bug, never user error
    return result


def _parse(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise InstrumentError(f"cannot parse: {error.message} (line {error.raw_line})") from None


def _controller_call(method: str, argument: cst.BaseExpression) -> cst.Call:
    return cst.Call(
        func=cst.Attribute(value=cst.Name(CONTROLLER), attr=cst.Name(method)),
        args=[cst.Arg(argument)],
    )


class _Capper(cst.CSTTransformer):
    def __init__(self, target: Union[ScopeNode, cst.SimpleStatementLine]) -> None:
        super().__init__()
        self.target = target

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        if original is not self.target:
            return updated
        boundary = cst.Expr(_controller_call("enter", cst.Name("None")))
        body = [boundary, *(statement.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for statement in updated.body),
                boundary]
        return updated.with_changes(body=body)

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        if original is not self.target:
            return updated
        return updated.with_changes(iter=_controller_call("iterate", updated.iter))

    def leave_While(self, original: cst.While, updated: cst.While) -> cst.While:
        if original is not self.target:
            return updated
        return updated.with_changes(test=_controller_call("check", updated.test))

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if original is not self.target:
            return updated
        return updated.with_changes(body=_count_calls(updated.body))


def _count_calls(body: cst.BaseSuite) -> cst.BaseSuite:
    """Put ``enter(...)`` into the first statement that runs on every call, on its own line."""
    if isinstance(body, cst.SimpleStatementSuite):
        return body.with_changes(body=[cst.Expr(_controller_call("enter", cst.Name("None"))), *body.body])
    statements = list(body.body)
    position = 0
    if _is_docstring(statements[0]) and len(statements) > 1:
        position = 1  # keep the docstring a docstring
    statements[position] = _entered(statements[position])
    return body.with_changes(body=statements)


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _entered(statement: cst.BaseStatement) -> cst.BaseStatement:
    if isinstance(statement, cst.SimpleStatementLine):
        call = cst.Expr(_controller_call("enter", cst.Name("None")))
        return statement.with_changes(body=[call, *statement.body])
    header = _header_expression(statement)
    if header is None:
        raise InstrumentError(
            f"the function starts with a `{type(statement).__name__.lower()}` statement, which cannot be counted "
            "without moving lines")
    field, expression = header
    if field == "items":  # with A as a, B: wrap A
        first = statement.items[0]
        items = [first.with_changes(item=_controller_call("enter", first.item)), *statement.items[1:]]
        return statement.with_changes(items=items)
    return statement.with_changes(**{field: _controller_call("enter", expression)})


def _header_expression(statement: cst.BaseStatement) -> Optional[tuple[str, cst.BaseExpression]]:
    if isinstance(statement, (cst.If, cst.While)):
        return "test", statement.test
    if isinstance(statement, cst.For) and statement.asynchronous is None:
        return "iter", statement.iter
    if isinstance(statement, cst.With) and statement.asynchronous is None:
        return "items", statement.items[0].item
    return None
