"""One walk over the LibCST tree: parents, source order, and nodes grouped by type.

LibCST's ParentNodeProvider and PositionProvider each cost about 2.5x the parse; this walk reads
the dataclass fields directly (about a quarter of the parse) and skips pure-whitespace fields,
which no rule asks about."""
from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from collections import defaultdict
from typing import Iterator, Optional, TypeVar

import libcst as cst

N = TypeVar("N", bound="cst.CSTNode")  # a string: importing this module does not load LibCST

# Fields that hold only whitespace, comments and punctuation.
_SKIPPED_FIELDS = frozenset({
    "asynchronous", "colon", "comma", "dot", "equal", "first_line", "footer", "header", "lbrace",
    "lbracket", "leading_lines", "lines_after_decorators", "lpar", "operator", "rbrace", "rbracket",
    "rpar", "semicolon", "trailing_whitespace", "empty_lines", "last_line", "leading_whitespace",
    "newline", "first_colon", "second_colon", "posonly_ind",
})
_fields_by_type: dict[type, tuple[str, ...]] = {}
_is_node_type: dict[type, bool] = {}


def deleted(delete: cst.Del) -> list[cst.BaseExpression]:
    """What a ``del`` statement deletes: each target of ``del a[:], b[:]``."""
    target = delete.target
    return [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]


def _child_fields_reversed(node_type: type) -> tuple[str, ...]:
    """The fields of a node type that may hold child nodes, last first."""
    names = _fields_by_type.get(node_type)
    if names is None:
        names = tuple(reversed([
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        ]))
        _fields_by_type[node_type] = names
    return names


def _is_node(value_type: type) -> bool:
    """``issubclass(value_type, cst.CSTNode)``, cached (the ABC check is slow per value)."""
    known = _is_node_type.get(value_type)
    if known is None:
        known = _is_node_type[value_type] = issubclass(value_type, cst.CSTNode)
    return known


class Tree:
    """Parent links, a preorder index (``start``) with the last index inside each subtree
    (``last``, by preorder index), and every node by type, from one iterative walk."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.start: dict[cst.CSTNode, int] = {}
        self.last: list[int] = []
        self.by_type: dict[type, list[cst.CSTNode]] = defaultdict(list)
        self._walk(module)

    def _walk(self, root: cst.CSTNode) -> None:
        parent, start, last, by_type = self.parent, self.start, self.last, self.by_type
        append_last = last.append
        fields_by_type, is_node_type = _fields_by_type, _is_node_type  # (the cached lookups, inlined)
        # Nodes, and above each node's children the preorder index of the node as a negative
        # number ``-1 - index``, met again once its subtree is done (ints hash without a call).
        stack: list = [root]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            node_type = type(node)
            if node_type is int:
                last[-1 - node] = len(last) - 1
                continue
            index = len(last)
            start[node] = index
            append_last(index)
            by_type[node_type].append(node)
            push(-1 - index)
            names = fields_by_type.get(node_type)
            if names is None:
                names = _child_fields_reversed(node_type)
            # Children pushed last first, so that they are numbered in source order.
            for name in names:
                value = getattr(node, name)
                value_type = type(value)
                if value_type is tuple or value_type is list:
                    for child in reversed(value):
                        child_type = type(child)
                        known = is_node_type.get(child_type)
                        if known or (known is None and _is_node(child_type)):
                            parent[child] = node
                            push(child)
                else:
                    known = is_node_type.get(value_type)
                    if known or (known is None and _is_node(value_type)):
                        parent[value] = node
                        push(value)

    def end(self, node: cst.CSTNode) -> int:
        """The preorder index of the last node inside ``node``'s subtree."""
        return self.last[self.start[node]]

    def nodes(self, node_type: type[N]) -> list[N]:
        return self.by_type.get(node_type, [])  # type: ignore[return-value]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parent.get(node)
        while parent is not None:
            yield parent
            parent = self.parent.get(parent)

    def under(self, node: cst.CSTNode, kind: type, within: cst.CSTNode) -> bool:
        """Some ancestor of ``node`` below ``within`` is a ``kind`` (``x`` of ``emb[x]`` under a
        ``SubscriptElement``; a reset under an ``If`` of the loop)."""
        for ancestor in self.ancestors(node):
            if ancestor is within:
                return False
            if isinstance(ancestor, kind):
                return True
        return False

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        start = self.start[outer]
        return start <= self.start[inner] <= self.last[start]

    def is_attribute_name(self, name: cst.Name) -> bool:
        """``layer`` in ``self.layer``: an attribute's name, not a variable."""
        parent = self.parent.get(name)
        return isinstance(parent, cst.Attribute) and parent.attr is name

    def before(self, a: cst.CSTNode, b: cst.CSTNode) -> bool:
        """``a`` starts before ``b`` in source order."""
        return self.start[a] < self.start[b]

    def descendants(self, node: cst.CSTNode, node_type: type[N]) -> list[N]:
        """Nodes of ``node_type`` inside ``node`` (itself included), in source order."""
        candidates = self.nodes(node_type)  # already in preorder: binary-search the subtree's range
        start = self.start
        lo = bisect_left(candidates, start[node], key=start.__getitem__)
        hi = bisect_right(candidates, self.last[start[node]], key=start.__getitem__)
        return candidates[lo:hi]

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.BaseStatement]:
        """The innermost statement (simple line or compound) holding ``node``."""
        current: Optional[cst.CSTNode] = node
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = self.parent.get(current)
        return current
