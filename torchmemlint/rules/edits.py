"""Building blocks for rule fixes (node replacements), shared so no rule re-implements them."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from torchmemlint.semantics import SemanticModel


def call_method(value: cst.BaseExpression, *methods: str) -> cst.BaseExpression:
    """``value.m1().m2()``, parenthesising ``value`` where precedence needs it."""
    if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not value.lpar:
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    for method in methods:
        value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name(method)))
    return value


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
