"""Semantics-preserving rewrites of a Python source, for the metamorphic tests.

Each rewrite is a function ``source -> rewritten source``, or ``None`` where it does not apply
(no loop to extract, no helper to inline, a shape it cannot rewrite without changing meaning).
The fixtures' ``# expect:`` comments are the markers that track the flagged statements: every
rewrite moves statements as LibCST nodes, and a node keeps its trailing comment wherever it
goes, so the rewritten source's markers say where each finding now belongs. ``apply`` checks
what can be checked of each result: it compiles, and it holds the same markers as the original.

Where a rewrite introduces a name (a helper, an alias, an iterator) it picks one spelled nowhere
in the source. Rewrites that move a block of statements into a function work out the names the
block reads from before it (its parameters) and the names it sets that are read after it (its
results) with ``analysis.walk``; a block that returns, breaks, yields or declares globals is
left alone.
"""
from __future__ import annotations

import builtins
import json
import re
import symtable
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional, Sequence

import libcst as cst

from metamorphic.analysis import (Analysis, analyse, bindings_in_scope, header_marked,
                                  is_class_scope, is_marked, is_module_scope, walk)


@dataclass(frozen=True)
class Rewrite:
    name: str
    function: Callable[[str], Optional[str]]
    suffix: str = ".py"  # the rewritten file's suffix (a notebook for ``notebook_cells``)


class RewriteError(AssertionError):
    """A rewrite produced something it must not: a bug in the rewrite, not in the linter."""


# --- alias imports ---------------------------------------------------------------------------


def alias_imports(source: str) -> Optional[str]:
    """Give every absolute import a new alias (``import torch as T``, ``from torch import nn as
    N``, ``import torch.nn.functional as F`` -> ``from torch.nn import functional as F2``) and
    spell every use of it that way."""
    analysis = analyse(source)
    renames: dict = {}  # Name node -> new spelling
    aliases: dict = {}  # ImportAlias node -> new alias
    taken: set[str] = set()
    for statement, alias in _import_aliases(analysis.module):
        if isinstance(statement, cst.ImportFrom) and (
                statement.relative or _dotted(statement.module) == "__future__"):
            continue
        bound = alias.asname.name.value if alias.asname else _dotted(alias.name)
        if "." in bound:
            continue  # ``import torch.nn`` binds ``torch`` together with ``import torch``
        scope = analysis.scopes.get(statement)
        if scope is None or is_class_scope(scope):
            continue
        assignments = scope.assignments[bound]
        if any(getattr(assignment, "node", None) is not statement for assignment in assignments):
            continue  # bound elsewhere too (a second import, an assignment)
        accesses = analysis.readers_of(assignments)
        if not all(set(analysis.referents[node]) <= set(assignments) for node in accesses):
            continue
        new = analysis.fresh(_initials(bound), taken)
        taken.add(new)
        aliases[alias] = new
        for node in accesses:
            renames[node] = new
    if not aliases:
        return None

    class Alias(cst.CSTTransformer):
        def leave_ImportAlias(self, original, updated):
            if original not in aliases:
                return updated
            return updated.with_changes(asname=cst.AsName(name=cst.Name(aliases[original])))

        def leave_Import(self, original, updated):
            # ``import a.b as X`` reads better as ``from a import b as X``
            alias = original.names[0]
            if len(original.names) == 1 and alias in aliases and "." in _dotted(alias.name):
                package, member = _dotted(alias.name).rsplit(".", 1)
                return cst.parse_statement(f"from {package} import {member} as {aliases[alias]}").body[0]
            return updated

        def leave_Name(self, original, updated):
            return updated.with_changes(value=renames[original]) if original in renames else updated

    return analysis.module.visit(Alias()).code


def _import_aliases(module: cst.Module):
    found = []

    class Imports(cst.CSTVisitor):
        def visit_Import(self, node):
            found.extend((node, alias) for alias in node.names)

        def visit_ImportFrom(self, node):
            if not isinstance(node.names, cst.ImportStar):
                found.extend((node, alias) for alias in node.names)

    module.visit(Imports())
    return found


def _dotted(node) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _initials(name: str) -> str:
    """``torch`` -> ``T``, ``nn`` -> ``N``, ``DataLoader`` -> ``DL``, ``no_grad`` -> ``NG``."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name) or [name]
    return "".join(word[0].upper() for word in words if word)


# --- rename local variables ------------------------------------------------------------------

_REFLECTIVE = re.compile(r"\b(locals|globals|vars|eval|exec)\s*\(")


def rename_locals(source: str) -> Optional[str]:
    """Rename every variable (a name bound only by assignments, loop targets, ``with ... as``,
    comprehensions; not parameters, imports, functions, classes or class attributes) to a name
    that says nothing (``v1``, ``v2``, ...), consistently at every use."""
    if _REFLECTIVE.search(source):
        return None
    analysis = analyse(source)
    declared = _declared_global_or_nonlocal(analysis.module)
    renames: dict = {}
    counter = 0
    for scope in _distinct_scopes(analysis):
        if is_class_scope(scope):
            continue
        for name in sorted({assignment.name for assignment in scope.assignments}):
            if name.startswith("__") or name in declared:
                continue
            assignments = list(scope.assignments[name])
            if not all(type(assignment).__name__ == "Assignment" and isinstance(assignment.node, cst.Name)
                       for assignment in assignments):
                continue
            references = analysis.readers_of(assignments)
            if not all(set(analysis.referents[node]) <= set(assignments) for node in references):
                continue
            counter += 1
            new = analysis.fresh(f"v{counter}")
            for node in [assignment.node for assignment in assignments] + references:
                renames[node] = new
    if not renames:
        return None
    return analysis.module.visit(_NameRenamer(renames)).code


class _NameRenamer(cst.CSTTransformer):
    def __init__(self, renames: dict) -> None:
        super().__init__()
        self.renames = renames

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.renames[original]) if original in self.renames else updated


def _distinct_scopes(analysis: Analysis):
    seen: dict = {}
    for scope in analysis.scopes.values():
        if scope is not None:
            seen.setdefault(id(scope), scope)
    return list(seen.values())


def _declared_global_or_nonlocal(module: cst.Module) -> set[str]:
    names: set[str] = set()

    class Declarations(cst.CSTVisitor):
        def visit_Global(self, node):
            names.update(item.name.value for item in node.names)

        def visit_Nonlocal(self, node):
            names.update(item.name.value for item in node.names)

    module.visit(Declarations())
    return names


# --- for -> while ----------------------------------------------------------------------------


def for_to_while(source: str) -> Optional[str]:
    """Every ``for target in iterable:`` loop (without ``else``) becomes ``it = iter(iterable)``
    and ``while True:`` with ``target = next(it)`` guarded by ``except StopIteration: break``."""
    if re.search(r"\b(iter|next|StopIteration)\s*=|def (iter|next)\b", source):
        return None
    analysis = analyse(source)
    taken: set[str] = set()

    class Loops(cst.CSTTransformer):
        def leave_For(self, original, updated):
            if original.asynchronous or original.orelse is not None or header_marked(analysis, original):
                return updated
            iterator = analysis.fresh("it", taken)
            taken.add(iterator)
            iterable = updated.iter
            if isinstance(iterable, cst.Tuple) and not iterable.lpar:
                iterable = iterable.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            start = cst.SimpleStatementLine(
                body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(iterator))],
                                 value=cst.Call(cst.Name("iter"), [cst.Arg(iterable)]))],
                leading_lines=updated.leading_lines)
            fetch = cst.Try(
                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Assign(
                    targets=[cst.AssignTarget(updated.target)],
                    value=cst.Call(cst.Name("next"), [cst.Arg(cst.Name(iterator))]))])]),
                handlers=[cst.ExceptHandler(
                    body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Break()])]),
                    type=cst.Name("StopIteration"))])
            body = _indented(updated.body)
            loop = cst.While(test=cst.Name("True"), body=body.with_changes(body=[fetch, *body.body]))
            return cst.FlattenSentinel([start, loop])

    result = analysis.module.visit(Loops())
    return result.code if taken else None


def _indented(body: cst.BaseSuite) -> cst.IndentedBlock:
    if isinstance(body, cst.IndentedBlock):
        return body
    return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=body.body)], header=body.trailing_whitespace)


# --- extraction: loop body into a function, into a method, prefix returning a tuple or dict --


@dataclass
class _Block:
    """A run of statements ``suite[start:end]`` of a loop (or function) body, to move elsewhere."""

    owner: cst.CSTNode  # the For/While/FunctionDef whose body holds the run
    start: int
    end: int
    scope: object  # the scope the run's names belong to
    parameters: list[str]  # names read from before the run
    results: list[str]  # names set by the run and read after it
    top: cst.CSTNode  # the module-level statement holding the run (the helper goes before it)


_BLOCK_FORBIDDEN = (cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.Del,
                    cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom)


def _extractable_statements(statements: Sequence[cst.CSTNode]) -> bool:
    """No statement leaves the run other than by falling through (no return, break or continue
    of the enclosing loop, no yield), declares scopes, or defines something (a nested def would
    move its closure)."""
    class Check(cst.CSTVisitor):
        ok = True
        loops = 0

        def on_visit(self, node):
            if isinstance(node, _BLOCK_FORBIDDEN):
                self.ok = False
            if isinstance(node, (cst.Break, cst.Continue)) and self.loops == 0:
                self.ok = False
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super" \
                    and not node.args:
                self.ok = False  # zero-argument super() works only inside the class
            if isinstance(node, cst.Name) and node.value == "__class__":
                self.ok = False
            attribute = node.attr.value if isinstance(node, cst.Attribute) else ""
            if attribute.startswith("__") and not attribute.endswith("__"):
                self.ok = False  # name mangling happens only inside the class
            if isinstance(node, (cst.For, cst.While)):
                self.loops += 1
            return self.ok

        def on_leave(self, node):
            if isinstance(node, (cst.For, cst.While)):
                self.loops -= 1

    check = Check()
    for statement in statements:
        statement.visit(check)
        if not check.ok:
            return False
    return True


def _block(analysis: Analysis, owner: cst.CSTNode, start: int, end: int) -> Optional[_Block]:
    if not isinstance(owner.body, cst.IndentedBlock) or start >= end:
        return None
    statements = owner.body.body[start:end]
    if not _extractable_statements(statements):
        return None
    if isinstance(owner, cst.FunctionDef):
        scope = analysis.scopes.get(owner.body.body[0])
    else:
        scope = analysis.scopes.get(owner)
    if scope is None or is_class_scope(scope):
        return None
    top = owner
    nested_functions = 0
    while analysis.parents.get(top) is not None and not isinstance(analysis.parents[top], cst.Module):
        top = analysis.parents[top]
        if isinstance(top, (cst.FunctionDef, cst.Lambda)):
            nested_functions += 1
    functions = nested_functions + (1 if isinstance(owner, cst.FunctionDef) else 0)
    if functions > 1:
        return None  # a function inside a function: its free names would not reach the helper
    if functions == 0 and not is_module_scope(scope):
        return None
    flow = walk(analysis, statements, scope)
    parameters = [name for name in flow.free if _passable(scope, name)]
    bound_at_start = _bound_at(analysis, owner, start, scope)
    if any(name not in bound_at_start for name in parameters):
        return None  # read only on some paths (``best = min(best, x) if step else x``): passing it could fail
    bound_here = []
    for statement in statements:
        for node in bindings_in_scope(analysis, statement, scope):
            if node.value not in bound_here:
                bound_here.append(node.value)
    if any(not isinstance(getattr(assignment, "node", None), cst.Name)
           for name in bound_here for assignment in scope.assignments[name]
           if _inside(analysis, assignment.node, statements)):
        return None
    read_after = _read_outside(analysis, scope, statements)
    # In a loop, what the run reads before setting it comes from its previous iteration (a loop
    # target excepted: the loop header sets it anew), so it is a result too.
    carried = set()
    if isinstance(owner, (cst.For, cst.While)):
        targets = {node.value for node in bindings_in_scope(analysis, owner.target, scope)} \
            if isinstance(owner, cst.For) else set()
        carried = set(parameters) - targets
    results = [name for name in bound_here if name in read_after or name in carried]
    if any(name not in flow.assigned and name not in parameters for name in results):
        return None  # set only on some paths: the helper could not return it
    return _Block(owner, start, end, scope, parameters, results, top)


def _bound_at(analysis: Analysis, owner: cst.CSTNode, start: int, scope) -> set[str]:
    """Names of ``scope`` certainly bound when ``owner.body.body[start]`` begins: set by the
    statements before it in every enclosing suite up to its function (whose parameters are bound),
    or by an enclosing loop's target or ``with ... as``."""
    bound = set(walk(analysis, owner.body.body[:start], scope).assigned)
    child = owner
    while True:
        if isinstance(child, cst.FunctionDef):
            params = child.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg]
            bound |= {param.name.value for param in every if isinstance(param, cst.Param)}
            return bound
        if isinstance(child, cst.For):
            bound |= {node.value for node in bindings_in_scope(analysis, child.target, scope)}
        if isinstance(child, cst.With):
            for item in child.items:
                if item.asname is not None:
                    bound |= {node.value for node in bindings_in_scope(analysis, item.asname, scope)}
        parent = analysis.parents.get(child)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            index = next(number for number, statement in enumerate(parent.body) if statement is child)
            bound |= walk(analysis, parent.body[:index], scope).assigned
        if parent is None or isinstance(parent, cst.Module):
            return bound
        child = parent


def _passable(scope, name: str) -> bool:
    """Names read from the enclosing scope that a module-level helper must receive: every local
    of a function; at module level the variables (imports, functions and classes stay global)."""
    if not is_module_scope(scope):
        return True
    return all(type(assignment).__name__ == "Assignment" and isinstance(assignment.node, cst.Name)
               for assignment in scope.assignments[name])


def _inside(analysis: Analysis, node: cst.CSTNode, statements: Sequence[cst.CSTNode]) -> bool:
    return analysis.inside(node, statements)


def _read_outside(analysis: Analysis, scope, statements) -> set[str]:
    """Names of ``scope`` read anywhere outside ``statements`` (or, in a loop, by the run itself
    before it sets them, which ``parameters`` covers)."""
    names = set()
    for node in analysis.readers_of(scope.assignments):  # from nested scopes too
        if not _inside(analysis, node, statements):
            names.add(node.value)
    for name_node, assignment in analysis.assignments_of.items():
        if assignment.scope is scope and isinstance(analysis.parents.get(name_node), cst.AugAssign) \
                and not _inside(analysis, name_node, statements):
            names.add(name_node.value)
    return names


def _loops_by_preference(analysis: Analysis) -> list[cst.CSTNode]:
    """Loops to try, best first: those holding the first expected finding (innermost first),
    then the innermost loops in source order, then the others."""
    loops: list = []

    class Loops(cst.CSTVisitor):
        def visit_For(self, node):
            loops.append(node)

        def visit_While(self, node):
            loops.append(node)

    analysis.module.visit(Loops())
    marked = [loop for loop in reversed(loops) if is_marked(analysis, loop.body)]
    innermost = [loop for loop in loops
                 if not any(_inside(analysis, other, [loop]) for other in loops if other is not loop)]
    ordered = []
    for loop in marked + innermost + loops:
        if loop not in ordered:
            ordered.append(loop)
    return ordered


def _whole_body_block(analysis: Analysis, loop: cst.CSTNode) -> Optional[_Block]:
    if not isinstance(loop.body, cst.IndentedBlock) or loop.orelse is not None \
            or getattr(loop, "asynchronous", None):
        return None
    return _block(analysis, loop, 0, len(loop.body.body))


def _helper_call(function: str, arguments: Sequence[str]) -> cst.Call:
    return cst.Call(cst.Name(function), [cst.Arg(cst.Name(name)) for name in arguments])


def _assign(targets: Sequence[str], value: cst.BaseExpression) -> cst.SimpleStatementLine:
    if len(targets) == 1:
        target: cst.BaseAssignTargetExpression = cst.Name(targets[0])
    else:
        target = cst.Tuple([cst.Element(cst.Name(name)) for name in targets], lpar=[], rpar=[])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])


def _function(name: str, parameters: Sequence[str], body: Sequence[cst.CSTNode]) -> cst.FunctionDef:
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters([cst.Param(cst.Name(parameter)) for parameter in parameters]),
        body=cst.IndentedBlock(list(body)),
    )


def _replace_run(analysis: Analysis, block: _Block, replacement: Sequence[cst.CSTNode],
                 helper: cst.CSTNode, before_owner: Sequence[cst.CSTNode] = ()) -> str:
    """The source with the run replaced by ``replacement``, ``before_owner`` placed right before
    the run's owner, and the helper placed before the module-level statement holding the run."""
    owner = block.owner
    body = owner.body
    new_owner = owner.with_changes(body=body.with_changes(
        body=[*body.body[:block.start], *replacement, *body.body[block.end:]]))
    if before_owner:  # comments above the owner stay above what now comes first
        before_owner = [before_owner[0].with_changes(leading_lines=owner.leading_lines), *before_owner[1:]]
        new_owner = new_owner.with_changes(leading_lines=[])
    index = next(number for number, statement in enumerate(analysis.module.body) if statement is block.top)

    class Replace(cst.CSTTransformer):
        def on_leave(self, original, updated):
            if original is owner:
                return cst.FlattenSentinel([*before_owner, new_owner]) if before_owner else new_owner
            return updated

    module = analysis.module.visit(Replace())
    helper = helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()] if index else [])
    statements = list(module.body)
    if not statements[index].leading_lines:
        statements[index] = statements[index].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return module.with_changes(body=[*statements[:index], helper, *statements[index:]]).code


def _extract(analysis: Analysis, block: _Block, mode: str) -> Optional[str]:
    statements = list(block.owner.body.body[block.start:block.end])
    name = analysis.fresh({"function": "loop_body", "tuple": "compute_step", "dict": "compute_step"}[mode])
    results = block.results
    if mode == "function":
        body = statements + ([_return_names(results)] if results else [])
        call = _helper_call(name, block.parameters)
        replacement = [_assign(results, call) if results else cst.SimpleStatementLine([cst.Expr(call)])]
    else:
        if not results:
            return None
        holder = analysis.fresh("outputs", [name])
        if mode == "tuple":
            returned = cst.Tuple([cst.Element(cst.Name(result)) for result in results])
            if len(results) > 1:
                replacement = [_assign(results, _helper_call(name, block.parameters))]
            else:
                replacement = [_assign([holder], _helper_call(name, block.parameters)),
                               _assign(results, cst.parse_expression(f"{holder}[0]"))]
        else:
            returned = cst.parse_expression("{" + ", ".join(f'"{result}": {result}' for result in results) + "}")
            replacement = [_assign([holder], _helper_call(name, block.parameters)),
                           *[_assign([result], cst.parse_expression(f'{holder}["{result}"]')) for result in results]]
        body = statements + [cst.SimpleStatementLine([cst.Return(returned)])]
    return _replace_run(analysis, block, replacement, _function(name, block.parameters, body))


def _return_names(names: Sequence[str]) -> cst.SimpleStatementLine:
    return cst.parse_statement(f"return {', '.join(names)}")


def extract_loop_body(source: str) -> Optional[str]:
    """The body of a loop becomes a module-level function: it receives the names the body reads
    from before it and returns the names it sets that are read later (``a, b = loop_body(x, a)``)."""
    analysis = analyse(source)
    for loop in _loops_by_preference(analysis):
        block = _whole_body_block(analysis, loop)
        if block is not None:
            return _extract(analysis, block, "function")
    return None


def _prefix_blocks(analysis: Analysis):
    """Runs that end right before a statement of interest, best first: before each flagged
    statement (in the innermost loop or function body holding it, then outer ones), then, in each
    loop and function body, before the last statement that reads something set earlier in it."""
    owners: list = []

    class Owners(cst.CSTVisitor):
        def visit_For(self, node):
            owners.append(node)

        def visit_While(self, node):
            owners.append(node)

        def visit_FunctionDef(self, node):
            owners.append(node)

    analysis.module.visit(Owners())
    candidates = []
    for owner in reversed(owners):  # inner bodies first
        if not isinstance(owner.body, cst.IndentedBlock):
            continue
        for index, statement in enumerate(owner.body.body):
            if is_marked(analysis, statement):
                candidates.append((0, owner, index))
    for owner in owners:
        if not isinstance(owner.body, cst.IndentedBlock):
            continue
        for index in reversed(range(1, len(owner.body.body))):
            candidates.append((1, owner, index))
            break
    for _, owner, index in sorted(candidates, key=lambda candidate: candidate[0]):
        statements = owner.body.body
        start = index
        docstring = isinstance(owner, cst.FunctionDef) and _is_docstring(statements[0])
        while start > (1 if docstring else 0) and _extractable_statements([statements[start - 1]]):
            start -= 1
        if start == index:
            continue
        block = _block(analysis, owner, start, index)
        if block is not None and block.results:
            yield block


def _is_docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def return_tuple(source: str) -> Optional[str]:
    """The statements before a flagged statement (or before the last statement of a loop or
    function body) move into a helper that returns what they set as a tuple; the caller unpacks
    it (``loss, logits = compute_step(model, x)``, or ``loss = outputs[0]``)."""
    analysis = analyse(source)
    for block in _prefix_blocks(analysis):
        return _extract(analysis, block, "tuple")
    return None


def return_dict(source: str) -> Optional[str]:
    """As ``return_tuple``, the helper returning a dict read by key (``loss = outputs["loss"]``)."""
    analysis = analyse(source)
    for block in _prefix_blocks(analysis):
        return _extract(analysis, block, "dict")
    return None


def extract_method(source: str) -> Optional[str]:
    """The body of a loop becomes the ``step`` method of a class whose instance, made right
    before the loop, holds the body's state on ``self``: the names it reads from before the loop
    and the names it sets are attributes (``self.running_loss += loss``); the loop's own target
    names are the method's arguments; after each call the caller's variables are read back from
    the instance."""
    analysis = analyse(source)
    for loop in _loops_by_preference(analysis):
        block = _whole_body_block(analysis, loop)
        if block is None:
            continue
        rewritten = _extract_method(analysis, block)
        if rewritten is not None:
            return rewritten
    return None


def _extract_method(analysis: Analysis, block: _Block) -> Optional[str]:
    loop = block.owner
    statements = list(loop.body.body)
    scope = block.scope
    targets = set()
    if isinstance(loop, cst.For):
        targets = {node.value for node in bindings_in_scope(analysis, loop.target, scope)}
    arguments = [name for name in block.parameters if name in targets]
    state = list(dict.fromkeys(name for name in [*block.parameters, *block.results] if name not in targets))
    returned = [name for name in block.results if name in targets]
    if not state:
        return None
    # a state name bound where only a plain name may stand (``except E as e``, ``(n := ...)``)
    # cannot become an attribute
    for statement in statements:
        for node in bindings_in_scope(analysis, statement, scope):
            parent = analysis.parents.get(node)
            if node.value in state and isinstance(parent, (cst.AsName, cst.NamedExpr)) \
                    and not isinstance(analysis.parents.get(parent), cst.WithItem):
                return None
    attribute = {name: (name if name != "self" else analysis.fresh("owner", state)) for name in state}
    initial = [attribute[name] for name in state if name in block.parameters]
    class_name = analysis.fresh("LoopState")
    instance = analysis.fresh("state", [class_name])
    method_name = "step"
    while method_name in attribute.values():
        method_name += "_"
    assignments = "".join(f"        self.{name} = {name}\n" for name in initial) or "        pass\n"
    helper = cst.parse_statement(
        f"class {class_name}:\n"
        f"    def __init__({', '.join(['self', *initial])}):\n{assignments}\n"
        f"    def {method_name}({', '.join(['self', *arguments])}):\n        pass\n")
    method_body = [statement.visit(_ToAttributes(analysis, scope, set(state), attribute)) for statement in statements]
    if returned:
        method_body.append(_return_names(returned))
    init, method = helper.body.body
    helper = helper.with_changes(body=helper.body.with_changes(
        body=[init, method.with_changes(body=method.body.with_changes(body=method_body))]))
    call = cst.parse_expression(f"{instance}.{method_name}({', '.join(arguments)})")
    replacement = [_assign(returned, call) if returned else cst.SimpleStatementLine([cst.Expr(call)])]
    replacement += [_assign([name], cst.parse_expression(f"{instance}.{attribute[name]}"))
                    for name in block.results if name not in targets]
    create = _assign([instance], cst.parse_expression(
        f"{class_name}({', '.join(name for name in state if name in block.parameters)})"))
    return _replace_run(analysis, block, replacement, helper, before_owner=[create])


class _ToAttributes(cst.CSTTransformer):
    """Reads and bindings of the state names (of the loop's scope) become ``self.<attribute>``."""

    def __init__(self, analysis: Analysis, scope, state: set, attribute: dict) -> None:
        super().__init__()
        self.analysis, self.scope, self.state, self.attribute = analysis, scope, state, attribute

    def leave_Name(self, original, updated):
        if original.value not in self.state:
            return updated
        assignment = self.analysis.assignments_of.get(original)
        ours = (assignment is not None and assignment.scope is self.scope) or \
            any(referent.scope is self.scope for referent in self.analysis.referents.get(original, ()))
        if not ours:
            return updated
        return cst.Attribute(cst.Name("self"), cst.Name(self.attribute[original.value]))


# --- wrap a value in an output object --------------------------------------------------------

_OUTPUT_WORDS = {"loss", "losses", "out", "outs", "output", "outputs", "logits", "logit", "pred", "preds",
                 "prediction", "predictions", "score", "scores", "yhat", "hat"}


def wrap_output(source: str) -> Optional[str]:
    """Each loss- or output-like variable set once (``loss = criterion(out, y)``) is set as a
    field of an output object instead (``loss_output = StepOutput(loss=criterion(out, y))``), and
    every read of it reads the field (``running += loss_output.loss``), as code reads ``.loss``
    from a model's output."""
    analysis = analyse(source)
    declared = _declared_global_or_nonlocal(analysis.module)
    wrapped: dict = {}  # Assign node -> (holder, name)
    reads: dict = {}  # Name node -> holder
    taken: set[str] = set()
    for scope in _distinct_scopes(analysis):
        if is_class_scope(scope):
            continue
        for name in sorted({assignment.name for assignment in scope.assignments}):
            if name in declared or not _output_like(name):
                continue
            assignments = list(scope.assignments[name])
            if len(assignments) != 1 or type(assignments[0]).__name__ != "Assignment" \
                    or not isinstance(assignments[0].node, cst.Name):
                continue
            target = assignments[0].node
            assign_target = analysis.parents.get(target)
            assign = analysis.parents.get(assign_target)
            if not isinstance(assign_target, cst.AssignTarget) or not isinstance(assign, cst.Assign) \
                    or len(assign.targets) != 1:
                continue
            references = analysis.readers_of(assignments)
            if not references or not all(len(analysis.referents[node]) == 1 for node in references):
                continue
            holder = analysis.fresh(f"{name}_output", taken)
            taken.add(holder)
            wrapped[assign] = (holder, name)
            for node in references:
                reads[node] = (holder, name)
    if not wrapped:
        return None
    fields = sorted({name for _, name in wrapped.values()})
    class_name = analysis.fresh("StepOutput", taken)
    definition = cst.parse_statement(
        f"class {class_name}:\n"
        f"    def __init__(self, {', '.join(f'{field}=None' for field in fields)}):\n"
        + "".join(f"        self.{field} = {field}\n" for field in fields))

    class Wrap(cst.CSTTransformer):
        def leave_Assign(self, original, updated):
            if original not in wrapped:
                return updated
            holder, name = wrapped[original]
            no_space = cst.SimpleWhitespace("")
            value = cst.Call(cst.Name(class_name), [cst.Arg(updated.value, keyword=cst.Name(name),
                                                            equal=cst.AssignEqual(no_space, no_space))])
            return updated.with_changes(targets=[cst.AssignTarget(cst.Name(holder))], value=value)

        def leave_Name(self, original, updated):
            if original not in reads:
                return updated
            holder, name = reads[original]
            return cst.Attribute(cst.Name(holder), cst.Name(name))

    module = analysis.module.visit(Wrap())
    return _insert_after_imports(module, [definition]).code


def _output_like(name: str) -> bool:
    parts = name.lower().split("_")
    return any(part in _OUTPUT_WORDS or part.endswith("loss") for part in parts)


def _insert_after_imports(module: cst.Module, statements: Sequence[cst.CSTNode]) -> cst.Module:
    """``statements`` placed after the module's docstring and leading imports."""
    index = 0
    body = list(module.body)
    while index < len(body) and (_is_docstring(body[index]) or _is_import_line(body[index])):
        index += 1
    placed = [statement.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
              for statement in statements]
    if index < len(body) and not body[index].leading_lines:
        body[index] = body[index].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return module.with_changes(body=[*body[:index], *placed, *body[index:]])


def _is_import_line(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


# --- notebook ---------------------------------------------------------------------------------


def notebook_cells(source: str) -> Optional[str]:
    """The module as a Jupyter notebook: a markdown title cell, then the leading imports in one
    code cell and each later top-level statement (consecutive simple statements together) in a
    cell of its own."""
    module = cst.parse_module(source)
    if len(module.body) < 2:
        return None
    groups: list[list] = []
    for statement in module.body:
        simple = isinstance(statement, cst.SimpleStatementLine)
        if groups and simple and all(isinstance(s, cst.SimpleStatementLine) for s in groups[-1]):
            groups[-1].append(statement)
        else:
            groups.append([statement])
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Rewritten as a notebook\n"]}]
    for number, group in enumerate(groups):
        code = module.with_changes(body=group, header=module.header if number == 0 else [], footer=[]).code
        code = code.strip("\n")
        lines = code.split("\n")
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                      "source": [line + "\n" for line in lines[:-1]] + [lines[-1]]})
    metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"}}
    notebook = {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(notebook, indent=1) + "\n"


def notebook_code(notebook: str) -> list[tuple[int, str]]:
    """(cell number counting every cell, source) of each code cell."""
    document = json.loads(notebook)
    return [(number, "".join(cell["source"])) for number, cell in enumerate(document["cells"], start=1)
            if cell["cell_type"] == "code"]


# --- decorator ----------------------------------------------------------------------------------

_DECORATOR = '''\
def {name}(function):
    """Stands for an unrelated decorator (timing, logging): calls the function unchanged."""
    @{functools}.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper
'''


def add_decorator(source: str) -> Optional[str]:
    """Every function gets an unrelated pass-through decorator (``functools.wraps`` around a
    ``*args, **kwargs`` wrapper), innermost, under the decorators it already has."""
    analysis = analyse(source)
    name = analysis.fresh("traced")
    functools_name = analysis.fresh("functools") if "functools" in analysis.names else "functools"
    count = [0]

    class Decorate(cst.CSTTransformer):
        def leave_FunctionDef(self, original, updated):
            if any("jit" in cst.Module([]).code_for_node(decorator.decorator) for decorator in original.decorators):
                return updated  # TorchScript compiles the function's own source: a wrapper would break it
            count[0] += 1
            decorator = cst.Decorator(cst.Name(name))
            if original.decorators:
                return updated.with_changes(decorators=[*updated.decorators, decorator])
            # the function's leading comments stay above its first line, now the decorator
            return updated.with_changes(
                decorators=[decorator.with_changes(leading_lines=updated.leading_lines)], leading_lines=[])

    module = analysis.module.visit(Decorate())
    if not count[0]:
        return None
    definitions = [cst.parse_statement(f"import functools as {functools_name}" if functools_name != "functools"
                                       else "import functools"),
                   cst.parse_statement(_DECORATOR.format(name=name, functools=functools_name))]
    return _insert_after_imports(module, definitions).code


# --- inline a helper ----------------------------------------------------------------------------


def inline_helper(source: str) -> Optional[str]:
    """A module-level function called once, as a statement (``x = helper(a, b)``,
    ``helper(a)``, ``return helper(a)``), whose only ``return`` is its last statement, is
    inlined: its parameters are assigned from the arguments, its body runs in place, its return
    value is assigned to the caller's target; its definition goes away. Its locals are renamed
    where they would clash with the caller's names."""
    analysis = analyse(source)
    globals_scope = analysis.scopes.get(analysis.module.body[0]) if analysis.module.body else None
    if globals_scope is None:
        return None
    for statement in analysis.module.body:
        if isinstance(statement, cst.FunctionDef):
            rewritten = _inline(analysis, globals_scope, statement)
            if rewritten is not None:
                return rewritten
    return None


def _inline(analysis: Analysis, globals_scope, helper: cst.FunctionDef) -> Optional[str]:
    if helper.decorators or helper.asynchronous or header_marked(analysis, helper) \
            or not isinstance(helper.body, cst.IndentedBlock):
        return None
    params = helper.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT and params.star_arg is not None or params.star_kwarg \
            or params.kwonly_params or params.posonly_params:
        return None
    literal = (cst.Integer, cst.Float, cst.SimpleString, cst.Name)  # evaluated once either way
    if any(param.default is not None and not isinstance(param.default, literal) for param in params.params):
        return None
    assignments = list(globals_scope.assignments[helper.name.value])
    if len(assignments) != 1:
        return None
    accesses = analysis.readers_of(assignments)
    if len(accesses) != 1:
        return None
    call = analysis.parents.get(accesses[0])
    if not isinstance(call, cst.Call) or call.func is not accesses[0]:
        return None
    small = analysis.parents.get(call)
    line = analysis.parents.get(small)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    if isinstance(small, cst.Assign):
        if len(small.targets) != 1:
            return None
        use = "assign"
    elif isinstance(small, (cst.Expr, cst.Return)):
        use = type(small).__name__.lower()
    else:
        return None
    body = list(helper.body.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    final = None
    if body and isinstance(body[-1], cst.SimpleStatementLine) and isinstance(body[-1].body[-1], cst.Return):
        if len(body[-1].body) != 1 or is_marked(analysis, body[-1]):
            return None
        final = body[-1].body[0].value
        body = body[:-1]
    if not body and final is None:
        return None

    class Check(cst.CSTVisitor):
        ok = True

        def on_visit(self, node):
            if isinstance(node, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal, cst.FunctionDef, cst.ClassDef,
                                 cst.Lambda, cst.Await)):
                self.ok = False
            return self.ok

    check = Check()
    for statement in body:
        statement.visit(check)
    if final is not None:
        final.visit(check)
    if not check.ok:
        return None
    # bind arguments to parameters
    try:
        bound = _bind(call, params.params)
    except ValueError:
        return None
    helper_scope = analysis.scopes.get(helper.body.body[0])
    caller_scope = analysis.scopes.get(line)
    if helper_scope is None or caller_scope is None or is_class_scope(caller_scope):
        return None
    outside = _names_outside(analysis, helper)
    helper_locals = {assignment.name for assignment in helper_scope.assignments}
    # free names of the helper must mean the same in the caller
    free = {name for name in _names_under(helper.body) if name not in helper_locals}
    if not is_module_scope(caller_scope) and any(name in caller_scope.assignments for name in free):
        return None
    renames: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(helper_locals):
        argument = bound.get(name)
        if name in outside and not (isinstance(argument, cst.Name) and argument.value == name):
            renames[name] = analysis.fresh(f"{name}_", taken | outside)
            taken.add(renames[name])
    nodes: dict = {}
    for assignment in helper_scope.assignments:
        if assignment.name in renames:
            if isinstance(assignment.node, cst.Name):
                nodes[assignment.node] = renames[assignment.name]
            elif not isinstance(assignment.node, cst.Param):
                return None
            for node in analysis.readers_of([assignment]):
                nodes[node] = renames[assignment.name]
    renamer = _NameRenamer(nodes)
    statements: list = []
    for param in params.params:
        argument = bound[param.name.value]
        if isinstance(argument, cst.Name) and argument.value == param.name.value:
            continue
        statements.append(_assign([renames.get(param.name.value, param.name.value)], argument))
    statements.extend(statement.visit(renamer) for statement in body)
    value = final.visit(renamer) if final is not None else None
    ending: Optional[cst.SimpleStatementLine] = None  # the statement the call's line becomes
    if use == "assign":
        ending = cst.SimpleStatementLine([small.with_changes(value=cst.Name("None") if value is None else value)])
    elif use == "return":
        ending = cst.SimpleStatementLine([small.with_changes(value=value)])
    elif value is not None and not isinstance(value, cst.Name):
        ending = cst.SimpleStatementLine([cst.Expr(value)])
    if ending is not None:
        statements.append(ending.with_changes(trailing_whitespace=line.trailing_whitespace))
    elif is_marked(analysis, line):
        return None  # the call's marker would have no statement of its own to stay on
    if not statements:
        return None
    first = statements[0]
    statements[0] = first.with_changes(leading_lines=[*line.leading_lines, *first.leading_lines])

    class Inline(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):
            return cst.FlattenSentinel(statements) if original is line else updated

        def leave_FunctionDef(self, original, updated):
            return cst.RemoveFromParent() if original is helper else updated

    return analysis.module.visit(Inline()).code


def _bind(call: cst.Call, params: Sequence[cst.Param]) -> dict:
    bound: dict = {}
    positional = [arg for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in call.args) or len(positional) > len(params):
        raise ValueError("cannot bind")
    for param, arg in zip(params, positional):
        bound[param.name.value] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value in bound or arg.keyword.value not in {p.name.value for p in params}:
                raise ValueError("cannot bind")
            bound[arg.keyword.value] = arg.value
    for param in params:
        if param.name.value not in bound:
            if param.default is None:
                raise ValueError("missing argument")
            bound[param.name.value] = param.default
    return bound


def _names_under(node: cst.CSTNode) -> set[str]:
    names: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name):
            names.add(name.value)

    node.visit(Names())
    return names


def _names_outside(analysis: Analysis, helper: cst.FunctionDef) -> set[str]:
    names: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is not helper

        def visit_Name(self, node):
            names.add(node.value)

    analysis.module.visit(Names())
    return names


# --- registry and checked application -------------------------------------------------------

REWRITES: tuple[Rewrite, ...] = (
    Rewrite("alias_imports", alias_imports),
    Rewrite("rename_locals", rename_locals),
    Rewrite("for_to_while", for_to_while),
    Rewrite("extract_loop_body", extract_loop_body),
    Rewrite("extract_method", extract_method),
    Rewrite("return_tuple", return_tuple),
    Rewrite("return_dict", return_dict),
    Rewrite("wrap_output", wrap_output),
    Rewrite("notebook_cells", notebook_cells, suffix=".ipynb"),
    Rewrite("add_decorator", add_decorator),
    Rewrite("inline_helper", inline_helper),
)
REWRITES_BY_NAME = {rewrite.name: rewrite for rewrite in REWRITES}

@lru_cache(maxsize=4)
def _undefined_names(code: str) -> frozenset[str]:
    """Global names the code reads that the module never binds and that are not builtins (per
    Python's own symbol tables): a rewrite that renames a binding but misses a use, or moves a
    read away from the scope that binds it, shows up here."""
    top = symtable.symtable(code, "<rewritten>", "exec")
    defined = set(dir(builtins)) | {symbol.get_name() for symbol in top.get_symbols()
                                    if symbol.is_assigned() or symbol.is_imported()}
    undefined: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        undefined.update(symbol.get_name() for symbol in table.get_symbols()
                         if symbol.is_referenced() and symbol.is_global() and symbol.get_name() not in defined)
        tables.extend(table.get_children())
    return frozenset(undefined)


_MARKERS = re.compile(r"#\s*expect:\s*(TML\d{3}(?:\s*,\s*TML\d{3})*)")


def markers(source: str) -> Counter:
    return Counter(code.strip() for match in _MARKERS.finditer(source) for code in match.group(1).split(","))


def apply(rewrite: Rewrite, source: str) -> Optional[str]:
    """The rewritten source, checked: it compiles, differs from the original and carries the same
    expected-finding markers; ``None`` where the rewrite does not apply."""
    result = rewrite.function(source)
    if result is None:
        return None
    code = "\n".join(text for _, text in notebook_code(result)) if rewrite.suffix == ".ipynb" else result
    try:
        compile(code, f"<{rewrite.name}>", "exec", dont_inherit=True)
    except SyntaxError as error:
        raise RewriteError(f"{rewrite.name} produced code that does not compile: {error}") from error
    if rewrite.suffix == ".py" and result == source:
        raise RewriteError(f"{rewrite.name} claims to apply but changed nothing")
    undefined = _undefined_names(code) - _undefined_names(source)
    if undefined:
        raise RewriteError(f"{rewrite.name} reads names nothing binds: {sorted(undefined)}")
    if markers(code) != markers(source):
        raise RewriteError(f"{rewrite.name} lost or duplicated expected-finding markers: "
                           f"{dict(markers(source))} -> {dict(markers(code))}")
    return result
