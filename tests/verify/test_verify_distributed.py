"""``verify --nproc-per-node 2`` on the CPU: torchrun with gloo and two ranks, through the real
command line. The DDP fixture keeps the validation loss's graphs on rank 0 only; the same
shapes as tml001_eval_accumulates_loss (batches of 16, an MLP 32 -> 64 -> 10), so rank 0 keeps
the same bytes per iteration: the activations the forward saved (input and ReLU output), the
log_softmax result, the int64 labels and the loss's own float."""
from __future__ import annotations

import json
import sys

import pytest

from support import FIXTURES, REPO_ROOT, module_env, run

pytestmark = pytest.mark.slow
pytest.importorskip("torch")

DISTRIBUTED = FIXTURES / "runnable" / "distributed"
F32, I64, B = 4, 8, 16
RANK0_LEAK = F32 * (B * 32 + B * 64) + F32 * B * 10 + I64 * B + F32

def verify(*args, cwd=REPO_ROOT):
    return run([sys.executable, "-m", "torchmemlint", "verify", "--yes", "--device", "cpu", "--nproc-per-node", "2", *args],
               cwd, module_env())


def test_a_leak_on_rank_0_only_is_confirmed_on_rank_0_and_not_on_rank_1() -> None:
    result = verify("--select", "TML001", "--format", "json", str(DISTRIBUTED / "ddp_val_loss_on_rank0.py"))
    assert result.returncode == 1, result.stderr
    [finding] = json.loads(result.stdout)
    assert (finding["code"], finding["verdict"], finding["nproc_per_node"]) == ("TML001", "confirmed-growth", 2)
    rank0, rank1 = finding["ranks"]
    assert (rank0["rank"], rank0["verdict"], rank0["bytes_per_iteration"]) == (0, "confirmed-growth", RANK0_LEAK)
    assert (rank0["original_bytes_per_iteration"], rank0["twin_bytes_per_iteration"]) == (RANK0_LEAK, 0)
    assert rank0["retained_by"][0]["name"] == "val_loss"
    assert (rank1["rank"], rank1["verdict"], rank1["bytes_per_iteration"]) == (1, "not-reproduced", 0)
    assert (rank1["original_bytes_per_iteration"], rank1["twin_bytes_per_iteration"]) == (0, 0)
    for rank in (rank0, rank1):
        assert (rank["meter"], rank["device"], rank["measured_iterations"]) == ("live-storage", "cpu", list(range(3, 11)))
        assert rank["original"]["status"] == rank["twin"]["status"] == "capped"
    combined = finding["combined"]
    assert combined["bytes_per_iteration"] == combined["imbalance_bytes_per_iteration"] == RANK0_LEAK
    assert combined["peak_bytes"] == max(rank0["original"]["peak_bytes"][1:])
    assert "confirmed-growth on rank 0; not on rank 1." in finding["explanation"]
    assert f"Rank imbalance: rank 0 keeps {RANK0_LEAK:,} B per iteration" in finding["explanation"]


def test_a_collective_only_one_rank_reaches_ends_at_the_timeout_naming_that_rank() -> None:
    result = verify("--timeout", "20", str(DISTRIBUTED / "ddp_hang_rank0_collective.py"))
    output = " ".join(result.stdout.split())  # unwrapped
    assert result.returncode == 1, result.stderr  # rank 1, which does not hang, confirms its leak
    assert ("Rank 0 had not ended at the timeout, after iteration 3: waiting at line 19 "
            "(`dist.all_reduce(torch.ones(1, device=device))`) (a collective that another rank never reached)."
            in output)
    assert "rank 0: The original timed out after 20 s, after iteration 3." in output
    assert "Rank 1 had not ended" not in output
    assert "rank 1: Live memory grows by 48 B per iteration more than with the fix" in output


def test_plot_is_refused_with_nproc_per_node(tmp_path) -> None:
    result = verify("--plot", str(tmp_path / "out.png"), str(DISTRIBUTED / "ddp_val_loss_on_rank0.py"))
    assert result.returncode == 2
    assert "--plot draws single-process replays; it is not drawn with --nproc-per-node" in result.stderr
