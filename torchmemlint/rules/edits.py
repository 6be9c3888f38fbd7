"""Building blocks for rule fixes (node replacements), shared so no rule re-implements them."""
from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from torchmemlint.rules.base import Replacement
from torchmemlint.semantics import SemanticModel


def call_method(value: cst.BaseExpression, *methods: str) -> cst.BaseExpression:
    """``value.m1().m2()``, parenthesising ``value`` where precedence needs it; a method the
    value already ends with is not repeated (``x.detach()`` + detach, cpu -> ``x.detach().cpu()``)."""
    if methods and _ends_with_call_to(value, methods[0]):
        methods = methods[1:]
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    for method in methods:
        value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)))
    return value


def _ends_with_call_to(value: cst.BaseExpression, method: str) -> bool:
    return isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) and \
        value.func.attr.value == method


_NUMBER_BUILTINS = frozenset({"float", "int", "round"})


def used_only_as_number(model: SemanticModel, name: str, scope: cst.CSTNode, exclude: cst.CSTNode) -> bool:
    """Whether every read of the local ``name`` in ``scope`` (outside ``exclude``) ends up as a
    number: through arithmetic into a format spec (``f"{total:.3f}"``), ``float()``/``int()``/
    ``round()``, a ``math`` function, or a comparison. Then a 0-dim tensor there can become a Python
    float without changing anything but memory; printed, returned or stored, it would show."""
    tree = model.tree
    for node in model.scopes.scope_nodes(scope, cst.Name):
        if node.value != name or tree.contains(exclude, node):
            continue
        parent = tree.parent.get(node)
        if isinstance(parent, (cst.AssignTarget, cst.Param)) or (isinstance(parent, cst.AugAssign) and parent.target is node):
            continue  # a (re)binding, not a read
        if isinstance(parent, cst.Attribute) and parent.attr is node or isinstance(parent, cst.Arg) and parent.keyword is node:
            continue  # ``obj.name`` / ``f(name=...)`` spell another thing
        while isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            parent = tree.parent.get(parent)
        if isinstance(parent, cst.FormattedStringExpression) and parent.format_spec:
            continue
        if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
            continue
        if isinstance(parent, cst.Arg):
            call = tree.parent.get(parent)
            callee = call.func if isinstance(call, cst.Call) else None
            if isinstance(callee, cst.Name) and callee.value in _NUMBER_BUILTINS:
                continue
            if callee is not None and (model.imports.qualify(callee) or "").startswith("math."):
                continue
        return False
    return True


def torch_spelling(model: SemanticModel, qualified: str) -> tuple[str, bool]:
    """How to write ``qualified`` (e.g. ``torch.no_grad``) in this module, and whether an
    ``import torch`` must be added for it."""
    local: Optional[str] = model.imports.local_name_for(qualified)
    if local is not None:
        return local, False
    return qualified, True


def with_import_torch(model: SemanticModel, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
    """Statements to put in place of ``stmt`` when it is the first statement of the module and
    ``import torch`` must be added before it (used by fixes that need ``torch``)."""
    return [cst.parse_statement("import torch\n"), stmt]


def first_statement_after_docstring_and_futures(module: cst.Module) -> Optional[cst.BaseStatement]:
    """Where an added import goes: after the module docstring and ``from __future__`` imports."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and stmt.body:
            small = stmt.body[0]
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue
            if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and \
                    small.module.value == "__future__":
                continue
        return stmt
    return None


def wrap_in_with(
    item: cst.BaseExpression, statements: Sequence[cst.BaseStatement], replacing: Optional[cst.BaseStatement] = None
) -> list[Replacement]:
    """Replacements that put ``statements`` (consecutive, in one block) into ``with item:``.
    ``replacing`` is a statement just before them that the ``with`` takes the place of (a bare
    ``torch.no_grad()``); its trailing comment moves to the ``with`` line."""
    anchor = replacing if replacing is not None else statements[0]
    body = list(statements) if replacing is not None else [statements[0].with_changes(leading_lines=[]),
                                                             *statements[1:]]
    header = anchor.trailing_whitespace if isinstance(anchor, cst.SimpleStatementLine) and replacing is not None \
        else cst.TrailingWhitespace()
    wrapped = cst.With(
        items=[cst.WithItem(item)],
        body=cst.IndentedBlock(body=body, header=header),
        leading_lines=anchor.leading_lines,
    )
    return [Replacement(anchor, wrapped)] + [
        Replacement(statement, cst.RemovalSentinel.REMOVE) for statement in statements if statement is not anchor
    ]


def torch_callable(model: SemanticModel, qualified: str, avoid: Sequence[cst.CSTNode] = ()) \
        -> Optional[tuple[cst.BaseExpression, list[Replacement]]]:
    """``qualified()`` (e.g. ``torch.no_grad()``) spelled as this module can, with the
    replacement that adds ``import torch`` when nothing imports it; None when the import has
    nowhere to go that ``avoid`` (statements the fix itself replaces) does not already claim."""
    spelling, needs_import = torch_spelling(model, qualified)
    call = cst.parse_expression(f"{spelling}()")
    if not needs_import:
        return call, []
    first = first_statement_after_docstring_and_futures(model.module)
    if first is None or any(first is node for node in avoid):
        return None
    return call, [Replacement(first, cst.FlattenSentinel([cst.parse_statement("import torch\n"), first]))]


def add_keyword_argument(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """``call`` with ``keyword=value`` appended after its last argument, laid out like the others
    (one per line with a trailing comma stays one per line with a trailing comma)."""
    new = cst.Arg(value=value, keyword=cst.Name(keyword),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    separator = args[-2].comma if len(args) >= 2 and isinstance(args[-2].comma, cst.Comma) else \
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    if isinstance(last.comma, cst.Comma):  # trailing comma: the new argument takes it over
        moved = last.with_changes(comma=separator)
        new = new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
    else:
        moved = last.with_changes(comma=separator, whitespace_after_arg=cst.SimpleWhitespace(""))
        new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
    return call.with_changes(args=[*args[:-1], moved, new])
