"""The runnable real-report set (bench/verify_reports/, replayed by `bench/verify_summary.py`)
stays honest: every case is well formed, `check` reports each leak at its labelled line (the
misses are listed, and must stay misses until check finds them), what it reports in the
near-misses is listed, and a sample is replayed on the CPU with exact verdict kinds.

The whole set is replayed on the CPU and on CUDA by `bench/verify_summary.py run`; the figures
are in docs/verification.md."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchmemlint.engine import check_source
from torchmemlint.labels import expected_diagnostics
from torchmemlint.rules import ALL_RULES
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.verdict import CONFIRMED_GROWTH, INCONCLUSIVE, NO_MEMORY_COST
from torchmemlint.verify.verifier import FileFindings, Settings, verify_findings

REPORTS = Path(__file__).resolve().parents[2] / "bench" / "verify_reports"
LEAKS = sorted(REPORTS.rglob("leak_*.py"))
NEAR_MISSES = sorted(REPORTS.rglob("near_*.py"))
HEADER_LABEL = re.compile(r"(?P<code>TML\d{3}) lines? (?P<lines>\d+(?:, \d+)*)")

# Leaks whose labelled line `check` does not report (so verify has nothing to replay there).
CHECK_MISSES = {
    "containers/leak_cat_accumulator_fprimes.py",  # a module-level torch.cat accumulator seeded by torch.empty(0, ...)
    "empty_cache/leak_trainer_empty_cache_per_step.py",  # empty_cache() in a step function called from the loop
    "replay_buffer/leak_episode_runner_actions_graph.py",  # a dict of lists of log-probs appended to the buffer
    "replay_buffer/leak_ppo_value_estimates_kept.py",  # a method's graph-carrying result appended to a dict's list
    "retain_graph/leak_multitask_retain_helper.py",  # retain_graph=True on every backward of a helper's loop
    "stateful_update/leak_weight_ema_shadow_list.py",  # shadow.sub_(... param) in place, outside no_grad
    "torch_load/leak_alf_checkpoint_load.py",  # map_location=None through a variable
}
# What `check --select ALL` reports in the near-misses (the fixed versions of the reports).
NEAR_MISS_FINDINGS = {
    "trials/near_crossval_fold_results.py": {(16, "TML004")},
}


def _name(path: Path) -> str:
    return path.relative_to(REPORTS).as_posix()


def _findings(path: Path):
    diagnostics, errors = check_source(path.read_bytes(), str(path), ALL_RULES)
    assert not errors
    return diagnostics


def test_the_set_is_large_enough() -> None:
    assert len(LEAKS) - len(CHECK_MISSES) >= 40
    twins = [leak for leak in LEAKS if leak.with_name("near_" + leak.name[len("leak_"):]).exists()]
    assert len(twins) >= 20


@pytest.mark.parametrize("path", LEAKS + NEAR_MISSES, ids=_name)
def test_every_case_is_well_formed(path: Path) -> None:
    lines = path.read_text().splitlines()
    assert re.match(r"# Source: https?://\S+$", lines[0])
    assert lines[1].startswith("# Report: ") and lines[2].startswith("# Shape: ")
    labels = expected_diagnostics(path.read_text())
    if path.name.startswith("near_"):
        assert lines[3] == "# Expect: near-miss: must be silent" and not labels
        return
    header = [(m.group("code"), int(n)) for m in HEADER_LABEL.finditer(lines[3])
              for n in m.group("lines").split(", ")]
    assert lines[3].startswith("# Expect: ") and {(n, code) for code, n in header} == labels


@pytest.mark.parametrize("path", LEAKS, ids=_name)
def test_check_reports_each_leak_at_its_labelled_line(path: Path) -> None:
    primary = HEADER_LABEL.search(path.read_text().splitlines()[3]).group("code")
    labelled = {line for line, code in expected_diagnostics(path.read_text()) if code == primary}
    reported = {d.line for d in _findings(path) if d.code == primary}
    assert bool(labelled & reported) != (_name(path) in CHECK_MISSES)


@pytest.mark.parametrize("path", NEAR_MISSES, ids=_name)
def test_what_check_reports_in_the_near_misses(path: Path) -> None:
    assert {(d.line, d.code) for d in _findings(path)} == NEAR_MISS_FINDINGS.get(_name(path), set())


# A sample replayed on the CPU, one per kind of verdict the set gives there (the whole set:
# bench/verify_summary.py run).
SAMPLE = {
    # the loss kept after its backward: no storage grows, the graph's nodes do (host memory)
    ("loss_accumulation/leak_label_model_running_loss.py", "TML001"): (CONFIRMED_GROWTH, "graph"),
    # a hook registered by a helper called once per step, against the twin that calls it once
    # before the loop: replayed per iteration of the loop that calls the helper
    ("hooks/leak_grad_hook_per_step.py", "TML007"): (CONFIRMED_GROWTH, "live-storage"),
    # predictions kept on the device: on the CPU `.cpu()` is the same storage
    ("predictions_on_gpu/leak_encoder_embeddings_on_device.py", "TML004"): (INCONCLUSIVE, "needs-cuda"),
    # a missing zero_grad costs wrong updates, not memory
    ("zero_grad/leak_kws_executor_no_zero_grad.py", "TML002"): (NO_MEMORY_COST, None),
}


@pytest.mark.slow
def test_a_sample_replayed_on_the_cpu(replay_server) -> None:
    files = []
    for name in sorted({name for name, _ in SAMPLE}):
        path = REPORTS / name
        twin = path.with_name("near_" + path.name[len("leak_"):])
        files.append(FileFindings.from_source(str(path), path.read_bytes(), _findings(path),
                                              twin.read_bytes() if twin.exists() else None))
    settings = Settings(limits=Limits(device="cpu", timeout_s=120, memory_limit=2**30))
    results = {(_name(Path(r.diagnostic.path)), r.diagnostic.code): r
               for r in verify_findings(files, settings, server=replay_server)}
    assert set(results) == set(SAMPLE)
    for key, (verdict, detail) in SAMPLE.items():
        judgement = results[key].judgement
        assert judgement.verdict == verdict, results[key].explanation
        assert (judgement.inconclusive_reason if verdict == INCONCLUSIVE else judgement.growth_meter) == detail
    assert results[("hooks/leak_grad_hook_per_step.py", "TML007")].scope.kind == "for"
    assert results[("hooks/leak_grad_hook_per_step.py", "TML007")].twin_origin == "file"
    kws = results[("zero_grad/leak_kws_executor_no_zero_grad.py", "TML002")].judgement
    assert kws.grad_norm > kws.twin_grad_norm > 0
