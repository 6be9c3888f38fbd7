"""A runnable fixture (fixtures/runnable/) as a step function: the script up to its first
top-level ``for`` loop runs once, and each call of the step runs the loop's body once on the
loop's next item (inside the ``with`` statement around the loop, if any: ``torch.no_grad()``).
The body keeps the fixture's file name and line numbers, so that creation sites name the
fixture's own lines."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.verify.verifier import FileFindings

RUNNABLE = Path(__file__).resolve().parents[1] / "fixtures" / "runnable"


# The runnable fixtures that keep memory at every iteration. The expected bytes are the ones
# tests/verify/test_verify_runnable_fixtures.py derives from the fixtures' shapes (batches of
# B = 16, an MLP 32 -> 64 -> 10, float32 values and int64 labels); here they are what the
# original keeps per call on its own, not its difference from the twin. A fixture whose
# results are meant to be kept (predictions, labels) is checked with that much tolerance: the
# twin keeps them too and passes; the original keeps more and fails.
F32, I64, B = 4, 8, 16
MLP_SAVED = F32 * (B * 32 + B * 64)  # a grad-enabled forward saves its input and the ReLU output
LOGITS = F32 * B * 10


@dataclass(frozen=True)
class Leak:
    fixture: str
    bytes_per_call: int  # what the original keeps per call
    twin: str  # "TML00x": the finding's own fix; "file": NAME.correct.py
    tolerance_bytes: int = 0  # what the step is meant to keep
    kept_by: str = ""  # the retention path's start, when a name keeps the growth
    cycles: bool = False  # kept by reference cycles only


LEAKS = [
    # The twin evaluates under no_grad (TML003's fix) and keeps the outputs only.
    Leak("tml001_eval_keeps_outputs", MLP_SAVED + LOGITS, "TML003", LOGITS, "namespace['outputs']"),
    Leak("tml001_eval_accumulates_loss", MLP_SAVED + LOGITS + I64 * B + F32, "TML001", 0, "namespace['val_loss']"),
    Leak("tml005_rnn_state", F32 * (B * 32 + B * 64) + I64 * B, "TML005", I64 * B, "namespace['h']"),
    # TML001's fix keeps Python numbers in the history, which frees each graph, retained or not.
    # (TML006's alone frees what the graph saved, but the kept losses still hold its nodes.)
    Leak("tml006_retain_graph", MLP_SAVED + LOGITS + I64 * B + 2 * F32, "TML001", 0, "namespace['history']"),
    # TML007's fix removes each step's hook at the end of the step.
    Leak("tml007_hook_in_loop", F32 * B * 64, "TML007", 0, "namespace['model']"),
    # The lru_cache's entries live in C, where the retention walk does not see: no name is credited.
    Leak("tml012_cached_tensor_function", F32 * 2 * B * 32, "file"),
    Leak("tml013_create_graph", F32 * (B * 32 + B * 64 + B * 10) + I64 * B + F32 * (2 * B * 10 + B * 64), "file", 0,
         "namespace['model']"),
    Leak("tml018_ctx_tensor", F32 * B * 64, "TML018", 0, cycles=True),
]


def twin_source(leak: Leak) -> str:
    path = RUNNABLE / f"{leak.fixture}.py"
    if leak.twin == "file":
        return path.with_name(f"{leak.fixture}.correct.py").read_text(encoding="utf-8")
    source = path.read_bytes()
    diagnostics, _ = check_source(source, str(path), ALL_RULES)
    finding = next(d for d in diagnostics if d.code == leak.twin)
    twin, origin = FileFindings.from_source(str(path), source, diagnostics).twin_of(finding)
    assert origin == "fix"
    return twin


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


def leak_steps(leak: Leak) -> tuple[Callable[[], None], Callable[[], None]]:
    """The steps of a leaking fixture and of its twin."""
    path = RUNNABLE / f"{leak.fixture}.py"
    original, _ = fixture_step(path.read_text(encoding="utf-8"), str(path))
    twin, _ = fixture_step(twin_source(leak), str(path))
    return original, twin
