"""A runnable fixture (fixtures/runnable/) as a step function: the script up to its first
top-level ``for`` loop runs once, and each call of the step runs the loop's body once on the
loop's next item (inside the ``with`` statement around the loop, if any: ``torch.no_grad()``).
The body keeps the fixture's file name and line numbers, so that creation sites name the
fixture's own lines."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Callable


def fixture_step(source: str, filename: str) -> tuple[Callable[[], None], dict[str, Any]]:
    """The step of the script ``source`` and the namespace it runs in."""
    module = ast.parse(source, filename)
    position, loop = next((i, node) for i, node in enumerate(module.body) if _loop(node))
    context = loop if isinstance(loop, ast.With) else None
    loop = _loop(loop)
    namespace: dict[str, Any] = {"__name__": "__runnable_fixture__", "__file__": filename}
    exec(compile(ast.Module(body=module.body[:position], type_ignores=[]), filename, "exec"), namespace)
    items = iter(eval(compile(ast.Expression(loop.iter), filename, "eval"), namespace))
    target = ast.Assign(targets=[loop.target], value=ast.Name("__item__", ast.Load()))
    ast.copy_location(target, loop)
    statements: list[ast.stmt] = [target, *loop.body]
    if context is not None:
        statements = [ast.copy_location(ast.With(items=context.items, body=statements), context)]
    body = compile(ast.fix_missing_locations(ast.Module(body=statements, type_ignores=[])), filename, "exec")

    def step() -> None:
        namespace["__item__"] = next(items)
        exec(body, namespace)

    return step, namespace


def _loop(statement: ast.stmt) -> ast.For | None:
    """The ``for`` loop that is ``statement``, or the first statement of a ``with`` block."""
    if isinstance(statement, ast.With) and statement.body:
        statement = statement.body[0]
    return statement if isinstance(statement, ast.For) else None


def load_fixture_step(path: Path) -> tuple[Callable[[], None], dict[str, Any]]:
    return fixture_step(path.read_text(encoding="utf-8"), str(path))
