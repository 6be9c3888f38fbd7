"""What the rewrites need to know about a source, computed once per source: the LibCST tree with
its scopes and parents, which Name node is a read or a binding of which scope, which statements
carry an ``# expect:`` marker, and a small definite-assignment walk over statement lists (the
extraction rewrites use it to tell the names a block reads from before it from those it sets
itself)."""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Optional, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, ScopeProvider
from libcst.metadata.scope_provider import Assignment, BuiltinScope, ClassScope, GlobalScope, Scope

MARKER = "expect:"


@dataclass(eq=False)
class Analysis:
    module: cst.Module
    scopes: dict  # node -> Scope
    parents: dict  # node -> parent node
    referents: dict  # Name node that reads a name -> the bindings (Assignments) it may see
    readers: dict  # id(Assignment) -> the Name nodes that may read it
    assignments_of: dict  # Name node -> Assignment (the binding that node performs)
    marked: set  # nodes that contain an ``# expect:`` comment
    names: frozenset  # every identifier spelled in the source
    spans: dict  # node -> (first, last + 1) pre-order index of the nodes under it
    name_nodes: list  # every Name node, in pre-order
    name_starts: list  # their pre-order indexes

    def names_under(self, node: cst.CSTNode) -> list[cst.Name]:
        """The Name nodes under ``node`` (a node of the tree, or a new node holding some)."""
        span = self.spans.get(node)
        if span is None:
            return [name for child in node.children for name in self.names_under(child)]
        first = bisect_left(self.name_starts, span[0])
        last = bisect_left(self.name_starts, span[1])
        return self.name_nodes[first:last]

    def inside(self, node: cst.CSTNode, containers) -> bool:
        """Whether ``node`` is one of ``containers`` or under one of them."""
        start = self.spans[node][0]
        for container in containers:
            span = self.spans.get(container)
            if span is not None and span[0] <= start < span[1]:
                return True
        return False

    def readers_of(self, assignments) -> list[cst.Name]:
        """The Name nodes that may read any of ``assignments``."""
        return [node for assignment in assignments for node in self.readers.get(id(assignment), ())]

    def fresh(self, stem: str, taken: Iterable[str] = ()) -> str:
        """A name spelled nowhere in the source (nor in ``taken``), ``stem`` if possible."""
        taken = set(taken)
        if stem not in self.names and stem not in taken:
            return stem
        number = 2
        while f"{stem}{number}" in self.names or f"{stem}{number}" in taken:
            number += 1
        return f"{stem}{number}"


@lru_cache(maxsize=4)
def analyse(source: str) -> Analysis:
    """The analysis of ``source`` (cached: every rewrite of one fixture shares it; the trees are
    immutable, so sharing is safe)."""
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    scopes = dict(wrapper.resolve(ScopeProvider))
    parents = dict(wrapper.resolve(ParentNodeProvider))
    referents: dict = {}
    readers: dict = {}
    assignments_of: dict = {}
    for scope in {id(scope): scope for scope in scopes.values() if scope is not None}.values():
        for access in scope.accesses:
            if isinstance(access.node, cst.Name):
                seen = tuple(access.referents) or _unordered_referents(access)
                referents[access.node] = seen
                for assignment in seen:
                    readers.setdefault(id(assignment), []).append(access.node)
        for assignment in scope.assignments:
            if isinstance(assignment, Assignment) and isinstance(assignment.node, cst.Name):
                assignments_of[assignment.node] = assignment
    marked: set = set()
    collector = _Collector()
    wrapper.module.visit(collector)
    for comment in collector.comments:
        node = comment
        while node is not None and node not in marked:
            marked.add(node)
            node = parents.get(node)
    return Analysis(wrapper.module, scopes, parents, referents, readers, assignments_of, marked,
                    frozenset(name.value for name in collector.name_nodes), collector.spans,
                    collector.name_nodes, [collector.spans[name][0] for name in collector.name_nodes])


def _unordered_referents(access) -> tuple:
    """The bindings a read sees when LibCST found none: it resolves a read in the bindings made
    before it in source order, so a read that sees the previous iteration's value (``best =
    min(best, x) if step else x`` in a loop) or a later module-level binding gets none. Python
    binds by scope, not by order: the read sees the name's bindings in the nearest scope that
    has any (class scopes are not seen from the functions inside them)."""
    scope = access.scope
    name = access.node.value
    first = True
    while scope is not None and not isinstance(scope, BuiltinScope):
        if first or not isinstance(scope, ClassScope):
            found = tuple(scope.assignments[name]) if name in scope.assignments else ()
            if found:
                return found
        first = False
        if scope.parent is scope:
            break
        scope = scope.parent
    return ()


class _Collector(cst.CSTVisitor):
    """One pass over the tree: each node's span in pre-order (so that "the names under this
    node" is a slice, not another pass), the Name nodes in order, the marker comments."""

    def __init__(self) -> None:
        super().__init__()
        self.spans: dict = {}
        self.name_nodes: list = []
        self.comments: list = []
        self.counter = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.spans[node] = (self.counter, None)
        self.counter += 1
        if isinstance(node, cst.Name):
            self.name_nodes.append(node)
        elif isinstance(node, cst.Comment) and MARKER in node.value:
            self.comments.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.spans[original_node] = (self.spans[original_node][0], self.counter)


def is_marked(analysis: Analysis, node: cst.CSTNode) -> bool:
    return node in analysis.marked


def header_marked(analysis: Analysis, node: cst.CSTNode) -> bool:
    """Whether a compound statement carries a marker outside its body (on its header line or in
    its decorators), so that changing the header would lose where the finding belongs."""
    body = getattr(node, "body", None)
    for child in node.children:
        if child is not body and child in analysis.marked:
            return True
    return isinstance(body, cst.IndentedBlock) and body.header in analysis.marked


def reads_of_scope(analysis: Analysis, node: cst.CSTNode, scope: Scope) -> list[cst.Name]:
    """Name nodes under ``node`` that read a binding of ``scope`` (from nested comprehensions and
    lambdas too), in source order; augmented-assignment targets count as reads."""
    found = []
    for name in analysis.names_under(node):
        if any(_binds_in(referent, scope) for referent in analysis.referents.get(name, ())):
            found.append(name)
        else:
            assignment = analysis.assignments_of.get(name)
            if assignment is not None and assignment.scope is scope and \
                    isinstance(analysis.parents.get(name), cst.AugAssign):
                found.append(name)
    return found


def _binds_in(referent, scope: Scope) -> bool:
    return isinstance(referent, Assignment) and referent.scope is scope


def bindings_in_scope(analysis: Analysis, node: cst.CSTNode, scope: Scope) -> list[cst.Name]:
    """Name nodes under ``node`` that bind a name of ``scope``, in source order."""
    return [name for name in analysis.names_under(node)
            if getattr(analysis.assignments_of.get(name), "scope", None) is scope]


# --- definite assignment -------------------------------------------------------------------


@dataclass
class Flow:
    """The result of walking a statement list: names read while possibly not yet set by the list
    itself (``free``: their value comes from before), and names set on every path through it."""

    free: list[str]
    assigned: set[str]


def walk(analysis: Analysis, statements: Sequence[cst.CSTNode], scope: Scope,
         assigned: Optional[set] = None) -> Flow:
    free: list[str] = []
    assigned = set(assigned or ())
    for statement in statements:
        assigned = _statement(analysis, statement, scope, assigned, free)
    return Flow(free, assigned)


def _read(analysis, node, scope, assigned, free) -> None:
    if node is None:
        return
    for name in reads_of_scope(analysis, node, scope):
        if name.value not in assigned and name.value not in free:
            free.append(name.value)


def _bound(analysis, node, scope) -> set[str]:
    return {name.value for name in bindings_in_scope(analysis, node, scope)}


def _statement(analysis, statement, scope, assigned: set, free: list) -> set:
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            assigned = _small(analysis, small, scope, assigned, free)
        return assigned
    if isinstance(statement, cst.If):
        _read(analysis, statement.test, scope, assigned, free)
        body = walk(analysis, _suite(statement.body), scope, assigned)
        free.extend(name for name in body.free if name not in free)
        if statement.orelse is None:
            return assigned
        other = statement.orelse
        branch = [other] if isinstance(other, cst.If) else _suite(other.body)
        orelse = walk(analysis, branch, scope, assigned)
        free.extend(name for name in orelse.free if name not in free)
        return body.assigned & orelse.assigned
    if isinstance(statement, (cst.For, cst.While)):
        _read(analysis, statement.iter if isinstance(statement, cst.For) else statement.test,
              scope, assigned, free)
        inner = set(assigned)
        if isinstance(statement, cst.For):
            _read_targets(analysis, statement.target, scope, assigned, free)
            inner |= _bound(analysis, statement.target, scope)
        body = walk(analysis, _suite(statement.body), scope, inner)
        free.extend(name for name in body.free if name not in free)
        if statement.orelse is not None:
            orelse = walk(analysis, _suite(statement.orelse.body), scope, assigned)
            free.extend(name for name in orelse.free if name not in free)
        return assigned
    if isinstance(statement, cst.With):
        inner = set(assigned)
        for item in statement.items:
            _read(analysis, item.item, scope, inner, free)
            if item.asname is not None:
                _read_targets(analysis, item.asname.name, scope, inner, free)
                inner |= _bound(analysis, item.asname.name, scope)
        body = walk(analysis, _suite(statement.body), scope, inner)
        free.extend(name for name in body.free if name not in free)
        return body.assigned
    if isinstance(statement, cst.Try):
        body = walk(analysis, _suite(statement.body), scope, assigned)
        free.extend(name for name in body.free if name not in free)
        for handler in statement.handlers:
            _read(analysis, handler.type, scope, assigned, free)
            inner = set(assigned)
            if handler.name is not None:
                inner |= _bound(analysis, handler.name.name, scope)
            handled = walk(analysis, _suite(handler.body), scope, inner)
            free.extend(name for name in handled.free if name not in free)
        for clause in (statement.orelse, statement.finalbody):
            if clause is not None:
                part = walk(analysis, _suite(clause.body), scope, body.assigned)
                free.extend(name for name in part.free if name not in free)
        return assigned
    # def, class, match, ...: everything they read is read, nothing counts as set
    _read(analysis, statement, scope, assigned, free)
    return assigned


def _small(analysis, small, scope, assigned: set, free: list) -> set:
    if isinstance(small, cst.Assign):
        _read(analysis, small.value, scope, assigned, free)
        for target in small.targets:
            _read_targets(analysis, target.target, scope, assigned, free)
        return assigned | _bound(analysis, small, scope)
    if isinstance(small, cst.AnnAssign):
        _read(analysis, small.value, scope, assigned, free)
        _read_targets(analysis, small.target, scope, assigned, free)
        return assigned | (_bound(analysis, small.target, scope) if small.value is not None else set())
    if isinstance(small, cst.AugAssign):
        _read(analysis, small.value, scope, assigned, free)
        _read(analysis, small.target, scope, assigned, free)
        return assigned | _bound(analysis, small.target, scope)
    _read(analysis, small, scope, assigned, free)
    return assigned | _bound(analysis, small, scope)  # a walrus in an expression


def _read_targets(analysis, target, scope, assigned, free) -> None:
    """What an assignment target reads: the objects of subscripts and attributes (``a[i] = v``
    reads ``a`` and ``i``); a plain name target reads nothing."""
    class Targets(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            _read(analysis, node.value, scope, assigned, free)
            return False

        def visit_Subscript(self, node: cst.Subscript) -> bool:
            _read(analysis, node, scope, assigned, free)
            return False

    target.visit(Targets())


def _suite(body: cst.BaseSuite) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    return [cst.SimpleStatementLine(body=body.body)]


def is_module_scope(scope: Scope) -> bool:
    return isinstance(scope, GlobalScope)


def is_class_scope(scope: Scope) -> bool:
    return isinstance(scope, ClassScope)


__all__ = ["Analysis", "Flow", "analyse", "bindings_in_scope", "header_marked",
           "is_class_scope", "is_marked", "is_module_scope", "reads_of_scope", "walk"]
