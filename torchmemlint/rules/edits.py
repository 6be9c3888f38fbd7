"""Building blocks for rule fixes (node replacements), shared so no rule re-implements them."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Optional, Sequence, Union

import libcst as cst

from torchmemlint.rules.base import Replacement
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.flow import MAPPING, TENSOR, Value


def replace_nodes(node: cst.CSTNode, new_by_old: dict[cst.CSTNode, cst.CSTNode]) -> cst.CSTNode:
    """``node`` with each of its descendants in ``new_by_old`` replaced, in one pass (one
    ``deep_replace`` per node would rebuild the tree each time, and the next original node
    would no longer be found in it)."""
    return node.visit(_node_replacer()(new_by_old)) if new_by_old else node


@lru_cache(maxsize=None)
def _node_replacer() -> type:
    """The transformer class, built on first use (deriving from LibCST's class at import time
    would load LibCST with the rules, which the command line loads lazily)."""

    class NodeReplacer(cst.CSTTransformer):
        def __init__(self, new_by_old: dict[cst.CSTNode, cst.CSTNode]) -> None:
            super().__init__()
            self.new_by_old = new_by_old

        def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:
            return self.new_by_old.get(original_node, updated_node)

    return NodeReplacer


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


TYPE_UNKNOWN = "no automatic fix: what the value holds is not known (a tensor, a tuple, a dict?)"


def without_graph(model: SemanticModel, expr: cst.BaseExpression, at: cst.CSTNode,
                  *then: str, stored_in: Optional[cst.BaseExpression] = None,
                  tensor_operand: bool = False) -> tuple[Optional[cst.BaseExpression], str]:
    """``expr`` rewritten to keep no autograd graph, by what the value flow knows it holds:
    ``x.detach()`` (then ``then``, e.g. ``.cpu()``) for a tensor; element by element for a
    tuple, list or dict written out; ``{k: v.detach() for k, v in d.items()}`` for a dict of
    tensors. Never a method a Python number or a container lacks: (None, why) when the kind is
    not known. ``stored_in``: the list ``expr`` is appended to; when the code joins that list
    with ``torch.cat``/``torch.stack``, its elements are tensors (else the join would fail).
    ``tensor_operand``: the caller knows ``expr`` holds a graph and is what a tensor's in-place
    operation writes (``buf.add_(v)``, ``buf[i] = v``, ``total += v`` into a tensor) or what is
    added to a Python number (``total += v`` into ``0.0``): those take a tensor or a number, and
    a number holds no graph, so it is a tensor."""
    value = model.flow.value(expr, at)
    if value.kind is None and (tensor_operand or (value.graph or value.device) and stored_in is not None
                               and joined_as_tensors(model, stored_in, at)):
        value = replace(value, kind=TENSOR)
    return _without_graph(expr, value, then)


_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack"})


def joined_as_tensors(model: SemanticModel, container: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """Whether the list named ``container`` (a local name or ``self.x``) is handed whole to a torch
    join (``torch.cat(preds)``) in the scope of ``at`` or, for ``self.x``, anywhere in the file:
    the join takes only tensors, so every element is one."""
    spelled = model.code(container)
    if not isinstance(container, (cst.Name, cst.Attribute)):
        return False
    where = model.module if isinstance(container, cst.Attribute) else model.scopes.scope_of(at)
    for call in model.tree.descendants(where, cst.Call):
        if model.imports.qualify(call.func) in _JOINS and call.args and call.args[0].keyword is None and \
                model.code(call.args[0].value) == spelled:
            return True
    return False


def _without_graph(expr: cst.BaseExpression, value: Value, then: Sequence[str]) -> tuple[Optional[cst.BaseExpression], str]:
    if value.kind == TENSOR:
        return call_method(expr, "detach", *then), ""
    if isinstance(expr, (cst.Tuple, cst.List)) and value.elements is not None and \
            not any(isinstance(e, cst.StarredElement) for e in expr.elements):
        elements = []
        for element, part in zip(expr.elements, value.elements):
            if part.graph or (then and part.device):
                new, why = _without_graph(element.value, part, then)
                if new is None:
                    return None, why
                element = element.with_changes(value=new)
            elements.append(element)
        return expr.with_changes(elements=elements), ""
    if isinstance(expr, cst.Dict) and value.fields is not None and \
            all(isinstance(e, cst.DictElement) for e in expr.elements):
        elements = []
        for element in expr.elements:
            new, why = _without_graph(element.value, value.field(_key(element.key)) or value.any_element(), then)
            if new is None:
                return None, why
            elements.append(element.with_changes(value=new))
        return expr.with_changes(elements=elements), ""
    if isinstance(expr, cst.DictComp) and value.kind == MAPPING and value.any_element().kind == TENSOR:
        # ``{key: tensor.detach() for ...}`` (another rule's fix, or the author's): each entry
        return expr.with_changes(value=call_method(expr.value, "detach", *then)), ""
    if value.kind == MAPPING:
        entries = [v for _, v in value.fields or ()] + ([value.element] if value.element else [])
        if entries and all(e.kind == TENSOR for e in entries):
            suffix = "".join(f".{method}()" for method in ("detach", *then))
            spelled = cst.Module([]).code_for_node(expr)
            if not isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                spelled = f"({spelled})"
            return cst.parse_expression(f"{{key: tensor{suffix} for key, tensor in {spelled}.items()}}"), ""
    return None, TYPE_UNKNOWN


def _key(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
        return expr.evaluated_value
    return None


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


def torch_spelling(model: SemanticModel, qualified: str, at: cst.CSTNode) -> tuple[str, bool]:
    """How to write ``qualified`` (e.g. ``torch.no_grad``) at ``at``, and whether an ``import
    torch`` must be added for it (an import inside another function does not count)."""
    local: Optional[str] = model.imports.local_name_for(qualified)
    if local is not None and _imported_where_visible(model, local.split(".")[0], at):
        return local, False
    return qualified, True


def _imported_where_visible(model: SemanticModel, name: str, at: cst.CSTNode) -> bool:
    """An import binding ``name`` at module level or in a function around ``at`` (not in ``at``
    itself: a decorator of ``at`` is evaluated outside it)."""
    for node in [*model.tree.nodes(cst.Import), *model.tree.nodes(cst.ImportFrom)]:
        if isinstance(node.names, cst.ImportStar) or name not in map(_bound_name, node.names):
            continue
        scope = model.scopes.scope_of(node)
        if scope is model.module or (scope is not at and model.tree.contains(scope, at)):
            return True
    return False


def _bound_name(alias: cst.ImportAlias) -> Optional[str]:
    if alias.asname is not None:
        return alias.asname.name.value if isinstance(alias.asname.name, cst.Name) else None
    name = alias.name
    while isinstance(name, cst.Attribute):  # ``import torch.nn`` binds ``torch``
        name = name.value
    return name.value if isinstance(name, cst.Name) else None


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


TORCH_NAME_TAKEN = "no automatic fix: `torch` names something else in this file (`import numpy as torch`?)"


def torch_name_taken(model: SemanticModel) -> bool:
    """Whether the file binds ``torch`` to something other than the torch package (``import
    numpy as torch``, ``torch = ...``, ``def torch``): a fix must not spell ``torch.x`` there,
    nor add an ``import torch`` that the file's own binding would shadow or be shadowed by."""
    if model.imports.aliases.get("torch", "torch") != "torch":
        return True
    return any(not isinstance(binding.node, (cst.Import, cst.ImportFrom, cst.ImportAlias))
               for scope in (model.module, *model.tree.nodes(cst.FunctionDef))
               for binding in model.scopes.bindings(scope).get("torch", ()))


def with_torch_import(model: SemanticModel, replacements: Sequence[Replacement]) -> Optional[list[Replacement]]:
    """``replacements`` plus an ``import torch`` before the first statement after the module
    docstring and ``__future__`` imports; None where there is no such statement, or where the
    file binds ``torch`` to something else (``torch_name_taken``).

    When that statement is itself replaced, or holds a replaced node (the loop to wrap may sit in
    the first ``if __name__ == "__main__":``), the replacement is folded into it: the engine
    replaces the outermost node, so a nested replacement would be lost."""
    first = first_statement_after_docstring_and_futures(model.module)
    if first is None or torch_name_taken(model):
        return None
    new_first: cst.CSTNode = first
    others: list[Replacement] = []
    for replacement in replacements:
        if replacement.old is first:
            new_first = replacement.new
        elif model.tree.contains(first, replacement.old):
            if not isinstance(replacement.new, cst.CSTNode) or not isinstance(new_first, cst.CSTNode):
                return None
            new_first = new_first.deep_replace(replacement.old, replacement.new)
        else:
            others.append(replacement)
    statements = list(new_first.nodes) if isinstance(new_first, cst.FlattenSentinel) else [new_first]
    if not statements or not isinstance(statements[0], cst.BaseStatement):
        return None
    before, attached = split_leading_lines(statements[0].leading_lines)
    # PEP 8: imports stay together; two blank lines before a def or class, one before other code.
    if isinstance(statements[0], (cst.FunctionDef, cst.ClassDef)):
        attached = [cst.EmptyLine(), cst.EmptyLine(), *attached]
    elif not _is_import(statements[0]):
        attached = [cst.EmptyLine(), *attached]
    import_torch = cst.parse_statement("import torch\n").with_changes(leading_lines=before)
    statements[0] = statements[0].with_changes(leading_lines=attached)
    return [*others, Replacement(first, cst.FlattenSentinel([import_torch, *statements]))]


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and \
        any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def split_leading_lines(lines: Sequence[cst.EmptyLine]) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """A statement's leading lines split into those a statement inserted before it takes (blank
    lines, and comments separated from it by one) and the comment lines right above it, which
    describe it and stay with it."""
    lines = list(lines)
    cut = len(lines)
    while cut > 0 and lines[cut - 1].comment is not None:
        cut -= 1
    return lines[:cut], lines[cut:]



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


def remove_keyword_argument(call: cst.Call, keyword: str) -> cst.Call:
    """``f(a, keyword=v, b=w)`` -> ``f(a, b=w)``; the argument before a removed last one takes its
    comma (a trailing comma stays, none is added)."""
    args = list(call.args)
    index = next(i for i, arg in enumerate(args) if arg.keyword is not None and arg.keyword.value == keyword)
    removed = args.pop(index)
    if index == len(args) and args:
        args[-1] = args[-1].with_changes(comma=removed.comma, whitespace_after_arg=removed.whitespace_after_arg)
    return call.with_changes(args=args)


def remove_statement(block: Union[cst.IndentedBlock, cst.Module], statement: cst.SimpleStatementLine,
                     small: cst.BaseSmallStatement) -> Replacement:
    """Delete ``small`` from its line in ``block``. The comment lines above it stay (on the next
    statement, or below the block's last one), and a block left empty gets ``pass``."""
    if len(statement.body) > 1:
        rest = [s for s in statement.body if s is not small]
        rest[-1] = rest[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return Replacement(statement, statement.with_changes(body=rest))
    body = list(block.body)
    index = next(i for i, line in enumerate(body) if line is statement)  # by identity: nodes compare by value
    if len(body) == 1:
        return Replacement(statement, statement.with_changes(body=[cst.Pass()]))
    del body[index]
    if index < len(body):
        body[index] = body[index].with_changes(leading_lines=[*statement.leading_lines, *body[index].leading_lines])
        return Replacement(block, block.with_changes(body=body))
    footer = [*statement.leading_lines, *block.footer]
    return Replacement(block, block.with_changes(body=body, footer=footer))
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
    spelling, needs_import = torch_spelling(model, qualified, avoid[0] if avoid else model.module)
    call = cst.parse_expression(f"{spelling}()")
    if not needs_import:
        return call, []
    first = first_statement_after_docstring_and_futures(model.module)
    if first is None or any(first is node for node in avoid):
        return None
    return call, [Replacement(first, cst.FlattenSentinel([cst.parse_statement("import torch\n"), first]))]
