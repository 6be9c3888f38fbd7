"""Check one file: parse once, build the semantic model lazily, run the selected rules, turn
their findings into positioned diagnostics (with fixes as text edits), apply ``# noqa``."""
from __future__ import annotations

import ast
import re
import sys
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Iterator, Optional, Sequence

import libcst as cst

from torchmemlint.diagnostics import Diagnostic, Edit, FileError, Fix, IterationSpan, Related, unexpected_error
from torchmemlint.rules.base import Finding, NodeFix, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import FileFacts, deepest_line, scan
from torchmemlint.semantics.tree import Tree
from torchmemlint.split_parse import parse_in_parts

# flake8's own pattern, so that ``# noqa`` means the same here and under flake8.
# (flake8.defaults.NOQA_INLINE_REGEXP: "#noqa" without the space is not a noqa comment there.)
NOQA = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@lru_cache(maxsize=None)
def _hash_nodes_by_identity() -> None:
    """LibCST nodes are equal only to themselves and hash by identity, but through Python methods
    (``CSTNode.__eq__``, ``__hash__``) that every dictionary keyed by nodes calls, millions of
    times per run (the tree index, the semantic model's caches, positions). The built-in
    ``object`` methods say the same in C. Done once, when LibCST is first needed (``parse``):
    the command line loads LibCST lazily."""
    by_identity = {"__hash__": (cst.CSTNode.__hash__, object.__hash__), "__eq__": (cst.CSTNode.__eq__, object.__eq__)}
    pending = [cst.CSTNode]
    while pending:
        node_class = pending.pop()
        pending.extend(node_class.__subclasses__())
        for name, (in_python, built_in) in by_identity.items():
            if node_class.__dict__.get(name) is in_python:
                setattr(node_class, name, built_in)


# Deeper nesting than this (LibCST's levels, ``deepest_line``) is not given to LibCST: its native
# parser overflows the C stack (a crash, not an exception) some way past it, and its code
# generation, like the rules' walks, recurses a few Python frames per level.
MAX_NESTING = 1_000
# The Python recursion limit while LibCST and the rules work on one file: enough for
# ``MAX_NESTING`` levels several times over (measured: 2,000 chained ``.f()`` need under 20,000
# frames), far below what the C stack holds.
RECURSION_LIMIT = 20_000


@contextmanager
def recursion_headroom() -> Iterator[None]:
    """Raise the recursion limit to ``RECURSION_LIMIT`` (never lower it), then restore it."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def parse(source: bytes, path: str, facts: Optional[FileFacts] = None) -> tuple[Optional[cst.Module], Optional[FileError]]:
    """Parse with LibCST (which decodes per BOM and PEP 263 cookie); a bad file is a FileError.

    LibCST only sees bytes that Python's ``ast`` parsed and found no deeper than ``MAX_NESTING``:
    ``facts``, the pre-screen of these bytes, says so, and without it the pre-screen runs here."""
    _hash_nodes_by_identity()
    if facts is None:
        facts = scan(source, path)
        if isinstance(facts, FileError):
            return None, facts
    deep = facts.tree is not None and facts.depth > MAX_NESTING  # (the pre-screen's walk measured it)
    line = deepest_line(facts.tree, MAX_NESTING) if deep else None
    if line is not None:
        return None, FileError(path, f"code nested more than {MAX_NESTING} levels deep: not checked", line)
    try:
        with recursion_headroom():
            return _parse_unvalidated(source, facts.tree), None
    except cst.ParserSyntaxError as error:
        return None, FileError(path, f"syntax error: {error.message}", error.raw_line, error.raw_column)
    except (UnicodeDecodeError, LookupError, SyntaxError) as error:
        return None, FileError(path, f"cannot decode file: {error}")
    except RecursionError:
        return None, FileError(path, "file is nested too deeply to parse")


def _parse_unvalidated(source: bytes, tree: Optional[ast.Module] = None) -> cst.Module:
    """``cst.parse_module`` without the per-node validation its constructors run (a tenth of
    the parse): the parser builds only valid trees, and LibCST's own comment on
    ``CSTNode.__post_init__`` plans to skip it when parsing. Nodes built elsewhere (the
    rules' fixes) are still validated. A long file whose ``ast`` is given is parsed in parts
    (``split_parse``), which LibCST does in time proportional to its length."""
    node_class = cst.CSTNode
    validating = _validating_post_init(node_class)
    node_class.__post_init__ = _skip_validation
    try:
        module = parse_in_parts(source, tree) if tree is not None else None
        return module if module is not None else cst.parse_module(source)
    finally:
        node_class.__post_init__ = validating


@lru_cache(maxsize=None)
def _validating_post_init(node_class: type) -> Callable:
    """LibCST's own ``__post_init__``, read once (so that nested or concurrent parses restore
    the original, never the replacement)."""
    return node_class.__dict__["__post_init__"]


def _skip_validation(node: cst.CSTNode) -> None:
    pass


def check_source(
    source: bytes, path: str, rules: Sequence[Rule], apply_noqa: bool = True, prescreen: bool = True,
    fix_edits: bool = True,
) -> tuple[list[Diagnostic], list[FileError]]:
    """Diagnostics of ``rules`` on one file's bytes, sorted; never raises for bad input, and
    whatever goes wrong while checking it becomes one error of this file (``unexpected_error``).

    ``fix_edits=False`` leaves each fix's edits out (``Fix.edits`` empty): output that shows no
    fixes then skips the code generation that turns node replacements into text.

    Every file is first parsed with Python's ``ast`` (syntax errors are reported from there);
    LibCST parses it only when some rule could match (``Rule.could_match`` on the pre-screen's
    facts). ``prescreen=False`` asks only the rules' text triggers instead: the reference the
    pre-screen is tested against."""
    try:
        with recursion_headroom():
            return _check_source(source, path, rules, apply_noqa, prescreen, fix_edits)
    except Exception as error:  # one file's failure must not stop the run
        return [], [unexpected_error(path, error)]


def _check_source(source: bytes, path: str, rules: Sequence[Rule], apply_noqa: bool, prescreen: bool,
                  fix_edits: bool) -> tuple[list[Diagnostic], list[FileError]]:
    facts = scan(source, path)
    if isinstance(facts, FileError):
        return [], [facts]
    if prescreen:
        active = [rule for rule in rules if rule.could_match(facts)]
    else:
        active = [rule for rule in rules if rule.triggered(source)]
    if not active:
        return [], []
    module, error = parse(source, path, facts)
    if module is None:
        return [], [error] if error else []
    model = SemanticModel(module, path)
    findings: list[tuple[Rule, Finding]] = []
    errors: list[FileError] = []
    for rule in active:
        try:
            findings.extend((rule, finding) for finding in rule.check(model))
        except RecursionError:
            errors.append(FileError(path, f"{rule.code} skipped: code nested too deeply"))
    if not findings:
        return [], errors
    code = _CodeOf(module)
    diagnostics = _positioned(module, model.tree, facts, path, findings, code, fix_edits)
    if apply_noqa and b"noqa" in source.lower():  # (no noqa comment, nothing to look up)
        diagnostics = _without_suppressed(code(), diagnostics)
    return sorted(set(diagnostics)), errors


class _CodeOf:
    """The module's code, generated on first use (it costs a code-generation pass)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.code: Optional[str] = None

    def __call__(self) -> str:
        if self.code is None:
            self.code = self.module.code
        return self.code


# Why a fix is dropped when LibCST and Python's tokenizer disagree on where its code is (LibCST
# counts a whitespace-only line ending in a backslash into the next statement's indentation).
POSITIONS_DISAGREE = "fix skipped: unsafe edit (LibCST and Python place this code on different lines)"


def _positioned(module: cst.Module, tree: Tree, facts: FileFacts, path: str,
                findings: list[tuple[Rule, Finding]], code: "_CodeOf", fix_edits: bool) -> list[Diagnostic]:
    """The findings as diagnostics, positioned on the same tree (no copy) so that the rules'
    nodes are the keys. Lines are cross-checked against ``ast``'s (``_LineCheck``): where
    they disagree, the diagnostic takes Python's line and its fix is dropped."""
    statement_lines = facts.statement_lines
    nodes = [finding.node for _, finding in findings]
    nodes += [node for _, finding in findings for node, _ in finding.related]
    lines = _LineCheck(tree, facts.tree, {})
    # A loop's or function's span comes from Python's own tree where the statements match: code
    # generation for positions would cost the whole loop, which may be most of the file.
    nodes += [finding.iteration for _, finding in findings
              if finding.iteration is not None and lines.python_span(finding.iteration) is None]
    if fix_edits:
        nodes += [r.old for _, finding in findings if finding.fix for r in finding.fix.replacements]
    positions = lines.positions = _positions(module, tree, statement_lines, nodes, lines, facts.source)
    diagnostics = []
    for rule, finding in findings:
        where = positions[finding.node]
        shift = lines.shift(finding.node) or 0
        fix, no_fix = finding.fix, finding.no_fix if finding.fix is None else ""
        if fix is not None and not all(lines.shift(r.old) == 0 for r in fix.replacements):
            fix, no_fix = None, POSITIONS_DISAGREE
        diagnostics.append(Diagnostic(
            path=path,
            line=where.start.line + shift,
            column=where.start.column,
            code=rule.code,
            message=finding.message or rule.message,
            name=rule.name,
            end_line=where.end.line + shift,
            end_column=where.end.column,
            fix=_fix(module, tree, statement_lines, code, fix, positions, fix_edits),
            related=tuple(Related(positions[node].start.line + (lines.shift(node) or 0), positions[node].start.column,
                                  positions[node].end.line + (lines.shift(node) or 0), positions[node].end.column,
                                  message)
                          for node, message in finding.related),
            iteration=_iteration_span(finding.iteration, positions, lines),
            no_fix=no_fix,
        ))
    return diagnostics


class _LineCheck:
    """LibCST's line of each statement against the one Python's own parser gives it: both see
    the same statements in the same order (small statements and compound ones), so the n-th
    of one is the n-th of the other."""

    def __init__(self, tree: Tree, python_tree, positions: dict) -> None:
        self.tree = tree
        self.positions = positions
        self.python_tree = python_tree
        self._index: Optional[dict] = None
        self._python_statements: list[ast.stmt] = []
        self._python_lines: list[int] = []

    def shift(self, node: cst.CSTNode) -> Optional[int]:
        """Python's line minus LibCST's for the statement holding ``node`` (0: they agree);
        None when the two cannot be matched (then nothing about the lines is trusted)."""
        statement_types = (cst.BaseSmallStatement, cst.BaseCompoundStatement)
        statement = node
        while statement is not None and not isinstance(statement, statement_types):
            statement = self.tree.parent.get(statement)
        if statement is None or statement not in self.positions:
            return 0  # the module itself
        index = self._statement_index()
        if index is None:
            return None
        return self._python_lines[index[statement]] - self.positions[statement].start.line

    def _statement_index(self) -> Optional[dict]:
        if self._index is None and self.python_tree is not None:
            statement_types = (cst.BaseSmallStatement, cst.BaseCompoundStatement)
            statements = sorted((node for node_type, nodes in self.tree.by_type.items()
                                 if issubclass(node_type, statement_types) for node in nodes),
                                key=self.tree.start.__getitem__)
            self._python_statements = _python_statements(self.python_tree)
            self._python_lines = [statement.lineno for statement in self._python_statements]
            if len(statements) == len(self._python_lines):
                self._index = {statement: number for number, statement in enumerate(statements)}
        return self._index

    def python_span(self, statement: cst.CSTNode) -> Optional[tuple[int, int]]:
        """The first and last line Python gives a compound statement (a function's from its
        ``def``, as LibCST's positions do), or None when the two parsers' statements cannot be
        matched."""
        index = self._statement_index() if isinstance(statement, cst.BaseCompoundStatement) else None
        if index is None or statement not in index:
            return None
        python_statement = self._python_statements[index[statement]]
        return python_statement.lineno, python_statement.end_lineno


def _python_statements(tree) -> list[ast.stmt]:
    """Every statement of an ``ast`` tree, in source (pre-)order, iteratively."""
    statements = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.stmt):
            statements.append(node)
        children = []
        for name in ("body", "handlers", "orelse", "finalbody", "cases"):
            for child in getattr(node, name, ()):
                children.append(child)
        pending.extend(reversed(children))
    return statements


def _iteration_span(node: Optional[cst.CSTNode], positions, lines: _LineCheck) -> Optional[IterationSpan]:
    if node is None:
        return None
    span = lines.python_span(node)
    if span is None:
        span = positions[node].start.line, positions[node].end.line
    if isinstance(node, cst.FunctionDef):
        return IterationSpan("function", *span, node.name.value)
    kind = "for" if isinstance(node, cst.For) else "while" if isinstance(node, cst.While) else "comprehension"
    return IterationSpan(kind, *span)


def _positions(module: cst.Module, tree: Tree, statement_lines: list[int], nodes: list[cst.CSTNode],
               lines: "_LineCheck", source: bytes) -> dict:
    """LibCST's ``PositionProvider`` ranges of (at least) ``nodes``. Positions cost a
    code-generation pass: only the top-level statements holding ``nodes`` are generated, each
    from the line it starts on (``_statement_starts``); in a top-level statement of more than
    ``_INNER_POSITIONS_LINES`` lines, only the statements of its blocks that hold them
    (``_inner_statements``), so that a finding in a huge function costs its own statement, not
    the function."""
    provider_class, state_class = _position_classes()
    starts = _statement_starts(module, statement_lines)
    wanted: dict[int, list[cst.CSTNode]] = {}
    for node in nodes:
        wanted.setdefault(_top_statement(module, tree, node), []).append(node)
    if starts is None or None in wanted:
        return _positions_and_code(module)[0]  # (the module itself, or ast sees other statements)
    provider = provider_class()
    ends = [*starts[1:], None]
    inner_safe: Optional[bool] = None
    for index in sorted(wanted):
        statement = module.body[index]
        inner = None
        if ends[index] is None or ends[index] - starts[index] > _INNER_POSITIONS_LINES:
            if inner_safe is None:
                inner_safe = not _LINES_MAY_DISAGREE.search(source)
            inner = _inner_statements(module, tree, lines, statement, wanted[index]) if inner_safe else None
        for part, line, indents in inner or [(statement, starts[index], [])]:
            state = state_class(default_indent=module.default_indent, default_newline=module.default_newline,
                                provider=provider)
            state.line = line
            state.indent_tokens = indents
            part._codegen(state)
    return provider._computed


# A top-level statement longer than this has positions generated only for its inner statements
# that hold findings.
_INNER_POSITIONS_LINES = 200
# Where LibCST's line count may part from CPython's (a whitespace-only line ending in a backslash,
# a lone carriage return): positions then come from whole top-level statements, as ever, so that
# ``_LineCheck`` sees the disagreement.
_LINES_MAY_DISAGREE = re.compile(rb"(?m)^[ \t\f]*\\\r?$|\r(?!\n)")


def _inner_statements(module: cst.Module, tree: Tree, lines: "_LineCheck", top: cst.CSTNode,
                      nodes: list[cst.CSTNode]) -> Optional[list[tuple[cst.CSTNode, int, list[str]]]]:
    """For each node, the innermost statement of an indented block that holds it (a line of
    small statements, or an undecorated compound one), with the line its code starts on (Python's
    line of its first token, less its leading blank and comment lines) and the indentation of the
    blocks around it; None where a node has none below ``top`` or lines cannot be matched."""
    index = lines._statement_index()
    if index is None:
        return None
    parent = tree.parent
    found: dict[int, tuple[cst.CSTNode, int, list[str]]] = {}
    for node in nodes:
        statement = node
        while statement is not top and not _starts_inner_code(statement, parent.get(statement)):
            statement = parent.get(statement)
            if statement is None:
                return None
        if statement is top:
            return None
        if id(statement) in found:
            continue
        first = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else statement
        number = index.get(first)
        if number is None:
            return None
        indents = []
        ancestor = parent.get(statement)
        while ancestor is not None:
            if isinstance(ancestor, cst.IndentedBlock):
                indents.append(module.default_indent if ancestor.indent is None else ancestor.indent)
            ancestor = parent.get(ancestor)
        indents.reverse()
        found[id(statement)] = (statement, lines._python_lines[number] - len(statement.leading_lines), indents)
    return list(found.values())


def _starts_inner_code(statement: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    """A statement whose code generation starts a line of its own block: a line of small
    statements or a compound statement in an indented block, without decorators (whose lines
    come before the one Python gives it)."""
    if not isinstance(parent, cst.IndentedBlock):
        return False
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return not statement.decorators and not statement.lines_after_decorators
    return isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement))


def _statement_starts(module: cst.Module, statement_lines: list[int]) -> Optional[list[int]]:
    """The line each top-level statement's code (its leading blank and comment lines included)
    starts on in the module's code: the line ``ast`` gives its first token (``statement_lines``,
    one per ``ast`` statement: a line ``a; b`` holds two) less those leading lines. None when
    ``ast`` and LibCST do not see the same statements."""
    starts = []
    count = 0
    for statement in module.body:
        if count >= len(statement_lines):
            return None
        decorators = getattr(statement, "decorators", ())
        leading = len(statement.leading_lines) + (len(decorators[0].leading_lines) if decorators else 0)
        starts.append(statement_lines[count] - leading)
        count += len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
    return starts if count == len(statement_lines) else None


def _top_statement(module: cst.Module, tree: Tree, node: cst.CSTNode) -> Optional[int]:
    """The index in ``module.body`` of the statement holding ``node``, or None (the module)."""
    parent = tree.parent
    while node is not None and parent.get(node) is not module:
        node = parent.get(node)
    return module.body.index(node) if node is not None else None


def _positions_and_code(module: cst.Module) -> tuple[dict, str]:
    """What ``MetadataWrapper(module).resolve(PositionProvider)`` gives (the same ranges, by
    LibCST's own code generation, for every node), and the module's code, in one pass."""
    provider_class, state_class = _position_classes()
    provider = provider_class()
    state = state_class(default_indent=module.default_indent, default_newline=module.default_newline,
                        provider=provider)
    module._codegen(state)
    return provider._computed, "".join(state.tokens)


@lru_cache(maxsize=None)
def _position_classes() -> tuple[type, type]:
    """LibCST's position provider and codegen state, with a faster bookkeeping: no regular
    expression for tokens without line breaks, and a slotted context manager instead of a
    generator-based one for every node. (Built on first use: deriving from LibCST's classes at
    import time would load LibCST with the engine.)"""
    from libcst._position import CodePosition, CodeRange
    from libcst.metadata.position_provider import PositionProvider, PositionProvidingCodegenState

    class SyntacticRecord:
        __slots__ = ("state", "node", "start_node", "end_node", "start")

        def __init__(self, state, node, start_node, end_node) -> None:
            self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

        def __enter__(self) -> None:
            self.start = CodePosition(self.state.line, self.state.column)

        def __exit__(self, *exception) -> None:
            state = self.state
            computed = state.provider._computed
            start = computed[self.start_node].start if self.start_node is not None else self.start
            end = computed[self.end_node].end if self.end_node is not None else CodePosition(state.line, state.column)
            computed[self.node] = CodeRange(start, end)

    class State(PositionProvidingCodegenState):
        def _update_position(self, value: str) -> None:
            if "\n" in value or "\r" in value:
                super()._update_position(value)
            else:
                self.column += len(value)

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return SyntacticRecord(self, node, start_node, end_node)

    return PositionProvider, State


def _fix(module: cst.Module, tree: Tree, statement_lines: list[int], code: "_CodeOf", fix: Optional[NodeFix],
         positions, with_edits: bool) -> Optional[Fix]:
    if fix is None:
        return None
    if not with_edits:
        return Fix(fix.description, fix.safe)
    return _text_fix(module, tree, statement_lines, code, fix, positions)


def _text_fix(module: cst.Module, tree: Tree, statement_lines: list[int], code: "_CodeOf", fix: NodeFix,
              positions) -> Optional[Fix]:
    """The node replacements as text edits. An expression replaced by an expression, both on
    one line, is its own span re-spelled; anything else (statements, whose lines need
    indentation, and multi-line expressions, which spelled alone lose their block's indentation
    on later lines) regenerates the module and keeps the region that differs, so LibCST does the
    indentation and everything else stays byte for byte."""
    if all(_one_line_expression_swap(module, r, positions) for r in fix.replacements):
        edits = []
        for replacement in fix.replacements:
            where = positions[replacement.old]
            old, new = _inside_parentheses(replacement.old, replacement.new)
            edits.append(Edit(where.start.line, where.start.column, where.end.line, where.end.column,
                              module.code_for_node(new), module.code_for_node(old)))
        return Fix(fix.description, fix.safe, tuple(edits))
    region = _regenerated_region(module, tree, statement_lines, fix)
    if region is None:  # the whole module, then
        region = 1, code(), module.visit(_replacer(fix)).code
    first_line, before, after = region
    if before == after:
        return None
    limit = min(len(before), len(after))
    prefix = _common_length(limit, lambda n: before[:n] == after[:n])
    suffix = _common_length(limit - prefix,
                            lambda n: before[len(before) - n:] == after[len(after) - n:])
    removed, inserted = before[prefix:len(before) - suffix], after[prefix:len(after) - suffix]
    if "\n" in removed or "\n" in inserted:
        # An edit over several lines covers them whole, or an insertion of lines goes in at a
        # line's start: one that starts inside a line (``def `` common to a helper put before a
        # function and the function) would let another fix's insertion at that line's start (a
        # decorator) land before the wrong ``def``.
        line_start = before.rfind("\n", 0, prefix) + 1
        if removed:
            prefix = line_start
            line_end = before.find("\n", len(before) - suffix)
            if line_end != -1:
                suffix = len(before) - line_end - 1
        elif inserted.endswith(before[line_start:prefix]):  # the same text, inserted a little earlier
            suffix += prefix - line_start
            prefix = line_start
    start_line, start_col = _line_col(before, prefix)
    end_line, end_col = _line_col(before, len(before) - suffix)
    edit = Edit(first_line + start_line - 1, start_col, first_line + end_line - 1, end_col,
                after[prefix:len(after) - suffix], before[prefix:len(before) - suffix])
    return Fix(fix.description, fix.safe, (edit,))


def _inside_parentheses(old: cst.CSTNode, new: cst.CSTNode) -> tuple[cst.CSTNode, cst.CSTNode]:
    """``old`` and ``new`` less the parentheses around ``old`` (``(a, b)`` kept by
    ``buf.append((a, b))``): a node's position leaves its parentheses out, its code does not. A
    replacement without as many parentheses is spelled whole, inside the ones that stay."""
    count = len(getattr(old, "lpar", ()))
    if not count:
        return old, new
    old = old.with_changes(lpar=(), rpar=())
    kept = len(getattr(new, "lpar", ())) - count
    if kept >= 0 and len(new.rpar) == len(new.lpar):
        new = new.with_changes(lpar=new.lpar[count:], rpar=new.rpar[:kept])
    return old, new


def _regenerated_region(module: cst.Module, tree: Tree, statement_lines: list[int],
                        fix: NodeFix) -> Optional[tuple[int, str, str]]:
    """The top-level statements the fix changes, before and after it, with the line they start
    on; None where they cannot stand for the whole module. Comparing the whole module's code
    before and after finds the same edit when the first difference lies inside the region (the
    common suffix is capped by the rest of the region either way), and when the module's last
    statement keeps its final line break."""
    starts = _statement_starts(module, statement_lines)
    indices = [_top_statement(module, tree, replacement.old) for replacement in fix.replacements]
    if starts is None or None in indices:
        return None
    first, last = min(indices), max(indices)
    if last == len(module.body) - 1 and not module.footer and not module.has_trailing_newline:
        return None
    replacer = _replacer(fix)
    before, after = [], []
    for statement in module.body[first:last + 1]:
        before.append(module.code_for_node(statement))
        new = statement.visit(replacer)
        if isinstance(new, cst.FlattenSentinel):
            after.extend(module.code_for_node(node) for node in new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            after.append(module.code_for_node(new))
    before_text, after_text = "".join(before), "".join(after)
    shortest = min(len(before_text), len(after_text))
    if before_text != after_text and before_text[:shortest] == after_text[:shortest]:
        return None  # one text starts the other: the first difference may lie past the region
    return starts[first], before_text, after_text


def _common_length(limit: int, same: Callable[[int], bool]) -> int:
    """The largest ``n <= limit`` with ``same(n)`` (a common prefix or suffix length), by
    bisection: string comparisons run in C, a character loop would not."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if same(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _replacer(fix: NodeFix) -> cst.CSTTransformer:
    """A transformer that puts each replacement in place of its node. (Defined when first
    needed: a class deriving from LibCST's at module level would load LibCST on import.)"""
    replacements = {id(r.old): r.new for r in fix.replacements}

    class Replacer(cst.CSTTransformer):
        def on_leave(self, original_node, updated_node):
            return replacements.get(id(original_node), updated_node)

    return Replacer()


def _line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and 0-based column of a character offset."""
    head = text[:offset]
    lines = _LINE_BREAK.split(head)
    return len(lines), len(lines[-1])


def _one_line_expression_swap(module: cst.Module, replacement, positions) -> bool:
    return isinstance(replacement.old, cst.BaseExpression) and isinstance(replacement.new, cst.BaseExpression) \
        and positions[replacement.old].start.line == positions[replacement.old].end.line \
        and "\n" not in module.code_for_node(replacement.new)


def noqa_codes(line_text: str) -> Optional[set[str]]:
    """None if the line has no noqa comment; an empty set for a bare ``# noqa`` (all codes)."""
    match = NOQA.search(line_text)
    if match is None:
        return None
    codes = match.group("codes")
    # Compared as written, as flake8 does: "# noqa:tml001" suppresses nothing.
    return {c for c in re.split(r"[,\s]+", codes) if c} if codes else set()


def _without_suppressed(code: str, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    lines = _LINE_BREAK.split(code)
    kept = []
    for diagnostic in diagnostics:
        line_text = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
        codes = noqa_codes(line_text)
        if codes is None or (codes and not any(diagnostic.code.startswith(c) for c in codes)):
            kept.append(diagnostic)
    return kept
