"""What a finding costs beyond storages that grow, on small scripts replayed on the CPU: the
autograd graph's nodes (the graph meter), a twin that crashes (a broken fix), confirmation
without a twin, a one-shot scope, and iterations that are calls of the function the rule named.
Findings are made by hand, as in test_verify_replay.py; node counts are exact."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Optional

import pytest

from torchmemlint.diagnostics import Diagnostic, Edit, Fix, IterationSpan
from torchmemlint.verify.instrument import instrument, statement_scope
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.verdict import (
    CONFIRMED_GROWTH, FIX_CRASHED, INCONCLUSIVE, NOT_REPRODUCED, heap_disturbed,
)
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings

pytestmark = pytest.mark.slow
LIMITS = Limits(device="cpu", timeout_s=60, memory_limit=2**30)

# A loss kept after its backward: (x @ w).relu().sum() is 3 nodes of its own (Sum, Relu, Mm)
# beside w's AccumulateGrad, which every step's graph shares.
KEEPS_LOSS = """\
    import torch
    w = torch.randn(4, 4, requires_grad=True)
    kept = []
    for step in range(100):
        loss = (torch.randn(2, 4) @ w).relu().sum()
        loss.backward()
        kept.append(loss)
    """


def verify(server, tmp_path: Path, source: str, marker: str, replacement: Optional[str] = None, code: str = "TML001",
           iteration: Optional[IterationSpan] = None, twin_text: Optional[str] = None) -> VerifyResult:
    source = textwrap.dedent(source)
    path = tmp_path / "script.py"
    path.write_text(source)
    line = next(number for number, text in enumerate(source.splitlines(), 1) if marker in text)
    column = source.splitlines()[line - 1].index(marker)
    fix = None
    if replacement is not None:
        fix = Fix("by hand", False, (Edit(line, column, line, column + len(marker), replacement),))
    finding = Diagnostic(str(path), line, column, code, "kept", fix=fix, iteration=iteration)
    [result] = verify_findings([FileFindings(str(path), source, [finding], twin_text)], Settings(limits=LIMITS),
                               server=server)
    return result


def test_a_loss_kept_after_backward_grows_the_graph(replay_server, tmp_path: Path) -> None:
    """The storages grow alike (the loss's 4 B, which `.detach()` keeps too); the graph does
    not: 3 nodes per iteration, host memory, bytes from the native heap."""
    result = verify(replay_server, tmp_path, KEEPS_LOSS, "kept.append(loss)", "kept.append(loss.detach())")
    judgement = result.judgement
    assert (result.verdict, judgement.growth_meter, judgement.memory) == (CONFIRMED_GROWTH, "graph", "host")
    assert (judgement.original_bytes_per_iteration, judgement.twin_bytes_per_iteration) == (4, 4)
    assert judgement.nodes_per_iteration == 3
    assert judgement.saved_tensors_per_iteration == 0  # backward freed what they saved
    assert 0 < judgement.bytes_per_iteration < 3 * 4096
    # from the native heap, unless it read as not growing in this replay and the next (the calibration then)
    assert judgement.bytes_per_iteration == judgement.native_bytes_per_iteration or heap_disturbed(judgement)
    assert "Host memory: a graph's nodes are C++ objects on the host heap" in result.explanation


def test_a_graph_kept_without_backward_also_saves_tensors(replay_server, tmp_path: Path) -> None:
    """Without backward the kept graphs keep what they saved: Mm the batch (for w's gradient; it
    needs no w, as the batch requires no gradient) and Relu its result: 2 tensors, 2 x 4 floats
    each, per iteration."""
    source = KEEPS_LOSS.replace("        loss.backward()\n", "")
    result = verify(replay_server, tmp_path, source, "kept.append(loss)", "kept.append(loss.detach())")
    judgement = result.judgement
    assert (result.verdict, judgement.growth_meter) == (CONFIRMED_GROWTH, "live-storage")
    assert (judgement.nodes_per_iteration, judgement.saved_tensors_per_iteration) == (3, 2)
    assert judgement.bytes_per_iteration == 4 * (2 * 4 + 2 * 4)


def test_keeping_numbers_keeps_no_graph(replay_server, tmp_path: Path) -> None:
    source = KEEPS_LOSS.replace("kept.append(loss)", "kept.append(loss.item())")
    result = verify(replay_server, tmp_path, source, "loss.item()", "float(loss)")
    assert result.verdict == NOT_REPRODUCED
    assert result.judgement.nodes_per_iteration == 0


def test_a_fix_that_crashes_is_reported_as_such(replay_server, tmp_path: Path) -> None:
    """A fix that calls `.item()` on a float: `fix-crashed`, with the exception and the line;
    the original alone still confirms its growing graph."""
    source = KEEPS_LOSS.replace("kept.append(loss)", "kept.append(loss.item())")
    result = verify(replay_server, tmp_path, source, "loss.item()", "loss.item().item()")
    assert result.verdict == FIX_CRASHED
    assert result.judgement.fix_error == "AttributeError at line 7: 'float' object has no attribute 'item'"
    assert result.judgement.alone_verdict == INCONCLUSIVE  # numbers: nothing grows
    assert result.to_json()["fix_error"] == result.judgement.fix_error
    assert result.explanation.startswith("The fix is broken: its twin raised AttributeError at line 7")


def test_without_a_twin_survivors_and_steady_growth_confirm(replay_server, tmp_path: Path) -> None:
    result = verify(replay_server, tmp_path, """\
        import torch
        kept = []
        for step in range(100):
            kept.append(torch.zeros(8))
        """, "kept.append")
    assert result.twin is None and result.twin_origin == ""
    assert (result.verdict, result.judgement.bytes_per_iteration) == (CONFIRMED_GROWTH, 8 * 4)
    assert "Kept alive by `kept`" in result.explanation
    assert "Created at line 4 (`kept.append(torch.zeros(8))`), 32 B per iteration." in result.explanation


def test_without_a_twin_growth_that_is_not_steady_stays_inconclusive(replay_server, tmp_path: Path) -> None:
    result = verify(replay_server, tmp_path, """\
        import torch
        kept = []
        for step in range(100):
            if step % 2:
                kept.append(torch.zeros(8))
        """, "kept.append")
    assert (result.verdict, result.judgement.inconclusive_reason) == (INCONCLUSIVE, "no-twin")


def test_python_objects_kept_per_iteration_grow_the_python_heap(replay_server, tmp_path: Path) -> None:
    """A hook registered at every step whose default argument is a list of 1,000 references:
    no storage, no graph, about 8 KB of Python heap per iteration. Tracing starts at the loop."""
    source = """\
        import torch
        model = torch.nn.Linear(2, 2)
        for step in range(100):
            model.register_forward_hook(lambda module, inputs, output, kept=[None] * 1000: None)
            model(torch.ones(1, 2))
        """
    twin = source.replace("            model.register_forward_hook(lambda module, inputs, output, kept=[None] * 1000: "
                          "None)\n", "            pass\n")
    result = verify(replay_server, tmp_path, source, "model.register_forward_hook", twin_text=textwrap.dedent(twin))
    judgement = result.judgement
    assert (result.verdict, judgement.growth_meter, judgement.memory) == (CONFIRMED_GROWTH, "python-heap", "host")
    assert 8 * 1000 <= judgement.bytes_per_iteration <= 8 * 1000 + 1024


def test_the_rules_iteration_span_is_the_iteration(replay_server, tmp_path: Path) -> None:
    """The finding is in a loop over chunks inside `step`, which the training loop calls once
    per step. From the line alone the chunk loop would be the iteration (2 chunks per step);
    the rule's span says the step: each call is an iteration, 2 chunks of 2 x 4 floats. The file
    calls `step` by name in its training loop, so the replay counts that loop's iterations: one
    call each."""
    source = """\
        import torch
        kept = []
        def step(batch):
            for part in batch.split(2):
                kept.append(part * 2)
        for i in range(100):
            step(torch.randn(4, 4))
        """
    result = verify(replay_server, tmp_path, source, "kept.append", iteration=IterationSpan("function", 3, 5, "step"))
    assert (result.scope.kind, result.scope.line) == ("for", 6)
    assert (result.verdict, result.judgement.bytes_per_iteration) == (CONFIRMED_GROWTH, 2 * 2 * 4 * 4)
    from_line = verify(replay_server, tmp_path, source, "kept.append")
    assert from_line.scope.kind == "for" and from_line.judgement.bytes_per_iteration == 2 * 4 * 4


def test_a_one_time_cost_is_replayed_once_around_its_statement(replay_server, tmp_path: Path) -> None:
    """torch.load without map_location: boundary 0 before the statement, 1 after it. On the CPU
    both load onto the CPU, and the verdict says that a CUDA replay is needed."""
    source = """\
        import os, tempfile
        import torch
        path = os.path.join(tempfile.mkdtemp(), "state.pt")
        torch.save({"w": torch.ones(64)}, path)
        state = torch.load(path)
        print(state["w"].sum())
        """
    text = textwrap.dedent(source)
    assert instrument(text, statement_scope(text, 5)).splitlines()[4] == (
        "__torchmemlint_replay__.enter(None); state = torch.load(path); __torchmemlint_replay__.enter(None)")
    result = verify(replay_server, tmp_path, source, "torch.load(path)", 'torch.load(path, map_location="cpu")',
                    code="TML011")
    assert (result.scope.kind, result.original.status, result.original.iterations) == ("statement", "capped", 1)
    assert result.original.live_bytes[1] - result.original.live_bytes[0] == 64 * 4  # the loaded tensor
    assert (result.verdict, result.judgement.inconclusive_reason) == (INCONCLUSIVE, "needs-cuda")
