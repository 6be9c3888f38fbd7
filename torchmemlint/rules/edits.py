"""Building blocks for rule fixes (node replacements), shared so no rule re-implements them."""
from __future__ import annotations

from typing import Optional, Union

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


def add_keyword_argument(call: cst.Call, keyword: str, value: cst.BaseExpression) -> cst.Call:
    """``f(a)`` -> ``f(a, keyword=value)``; in a call written one argument per line the new
    argument gets its own line, and a trailing comma stays trailing."""
    new_arg = cst.Arg(value=value, keyword=cst.Name(keyword),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    if not call.args:
        return call.with_changes(args=[new_arg])
    *head, last = call.args
    opening = call.whitespace_before_args
    if isinstance(opening, cst.ParenthesizedWhitespace):  # same indentation, without the comment
        separator = cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(
            indent=opening.indent, last_line=opening.last_line))
    else:
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    new_arg = new_arg.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
    last = last.with_changes(comma=separator, whitespace_after_arg=cst.SimpleWhitespace(""))
    return call.with_changes(args=[*head, last, new_arg])


def remove_statement(block: Union[cst.IndentedBlock, cst.Module], statement: cst.SimpleStatementLine,
                     small: cst.BaseSmallStatement) -> Replacement:
    """Delete ``small`` from its line in ``block``. The comment lines above it stay (on the next
    statement, or below the block's last one), and a block left empty gets ``pass``."""
    if len(statement.body) > 1:
        rest = [s for s in statement.body if s is not small]
        rest[-1] = rest[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return Replacement(statement, statement.with_changes(body=rest))
    body = list(block.body)
    index = body.index(statement)
    if len(body) == 1:
        return Replacement(statement, statement.with_changes(body=[cst.Pass()]))
    del body[index]
    if index < len(body):
        body[index] = body[index].with_changes(leading_lines=[*statement.leading_lines, *body[index].leading_lines])
        return Replacement(block, block.with_changes(body=body))
    footer = [*statement.leading_lines, *block.footer]
    return Replacement(block, block.with_changes(body=body, footer=footer))
