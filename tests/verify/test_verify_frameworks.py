"""Findings that only a framework reaches, and costs outside the replay's own process, on the CPU:

- the framework fixtures (``fixtures/runnable/frameworks/``): a Lightning ``training_step`` and
  ``validation_step`` and a Hugging Face ``compute_loss``, each called by a trainer that the
  script starts with far more than a replay needs (epochs, loggers, checkpoints, callbacks that
  need validation); verify drives it for a few steps (``torchmemlint/verify/drive.py``) and
  measures each call as an iteration. Node counts and storage bytes are exact;
- a script that imports a framework that is not installed (``framework-not-installed``), and a
  LightningModule that its file never trains (``scope-not-reached``, with a hint);
- TML010's watch of the DataLoader workers (``workers.py``): attribution of device memory to the
  replay's child processes, with a reader standing in for NVML (no GPU here); the CPU verdict is
  in ``test_verify_runnable_fixtures.py`` and ``test_verify_verdict.py``;
- the allocation sites' reading of a CUDA allocator snapshot (``sites.py``), on a snapshot written
  out here (the CUDA figures are in docs/verification.md).

lightning, transformers and accelerate are in the ``[test]`` extra; without them the tests that
replay them skip, saying which is missing.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from torchmemlint.diagnostics import Diagnostic, Edit, Fix
from torchmemlint.engine import check_source
from torchmemlint.rules import ALL_RULES
from torchmemlint.verify.drive import lightning_overrides, phase_of
from torchmemlint.verify.frameworks import framework_class, missing_framework
from torchmemlint.verify.runner import Limits
from torchmemlint.verify.sites import active_blocks, allocation_sites, user_frame
from torchmemlint.verify.verdict import CONFIRMED_GROWTH, INCONCLUSIVE
from torchmemlint.verify.verifier import FileFindings, Settings, VerifyResult, verify_findings
from torchmemlint.verify.workers import WorkerWatch, descendants

# (one xdist worker runs this module: its module fixtures are computed once, not once per worker)
pytestmark = pytest.mark.xdist_group("test_verify_frameworks")

FRAMEWORKS = Path(__file__).resolve().parents[2] / "fixtures" / "runnable" / "frameworks"
LIMITS = Limits(device="cpu", timeout_s=120, memory_limit=2**30)
F32, B = 4, 16


def _needs(*packages: str):
    missing = [package for package in packages if importlib.util.find_spec(package) is None]
    return pytest.mark.skipif(bool(missing), reason=f"{', '.join(missing)} not installed (pip install "
                                                    f"'torchmemlint[test]' brings it)")


def _findings(name: str) -> FileFindings:
    path = FRAMEWORKS / name
    source = path.read_bytes()
    diagnostics, errors = check_source(source, str(path), ALL_RULES)
    assert not errors and diagnostics
    return FileFindings.from_source(str(path), source, diagnostics)


def _verify(server, *names: str) -> dict[str, VerifyResult]:
    results = verify_findings([_findings(name) for name in names], Settings(limits=LIMITS), server=server)
    return {Path(result.diagnostic.path).name: result for result in results}


@pytest.fixture(scope="module")
def lightning_results(replay_server) -> dict[str, VerifyResult]:
    return _verify(replay_server, "lightning_training_step_keeps_loss.py", "lightning_validation_keeps_outputs.py",
                   "lightning_module_only.py")


@pytest.mark.slow
@_needs("lightning")
def test_a_lightning_training_step_that_keeps_its_loss(lightning_results) -> None:
    """Each call of training_step is an iteration; the kept loss's 7 nodes (NllLoss, LogSoftmax,
    2 x Addmm, 2 x T, Relu) stay after Lightning's backward, while its 4-B float is kept by the
    `.detach()` twin too."""
    result = lightning_results["lightning_training_step_keeps_loss.py"]
    judgement = result.judgement
    assert (result.verdict, judgement.growth_meter, judgement.memory) == (CONFIRMED_GROWTH, "graph", "host")
    assert judgement.nodes_per_iteration == 7
    assert (judgement.original_bytes_per_iteration, judgement.twin_bytes_per_iteration) == (F32, F32)
    assert (result.original.status, result.original.iterations) == ("capped", 10)
    assert (result.scope.kind, result.scope.name) == ("function", "training_step")
    assert result.retained_by[0]["example"].endswith("losses[2]")


@pytest.mark.slow
@_needs("lightning")
def test_a_lightning_validation_step_is_reached_in_a_few_steps(lightning_results) -> None:
    """The script's trainer stops after 3 steps and would validate after 200: only the replay's
    own limits (one training batch per epoch, then validation) reach validation_step 10 times. Each
    call keeps its B x 10 logits; there is no fix, the original alone confirms."""
    result = lightning_results["lightning_validation_keeps_outputs.py"]
    assert (result.verdict, result.judgement.growth_meter) == (CONFIRMED_GROWTH, "live-storage")
    assert result.judgement.bytes_per_iteration == F32 * B * 10
    assert (result.original.status, result.original.iterations) == ("capped", 10)
    assert result.created_at[0]["line"] == 25


@pytest.mark.slow
@_needs("lightning")
def test_a_lightning_module_that_its_file_never_trains(lightning_results) -> None:
    result = lightning_results["lightning_module_only.py"]
    assert (result.verdict, result.judgement.inconclusive_reason) == (INCONCLUSIVE, "scope-not-reached")
    assert "`Classifier` is a `L.LightningModule` (lightning): its methods run only when the script starts the " \
           "framework, e.g. with `Trainer(...).fit(model, loader)`" in result.explanation


@pytest.mark.slow
@_needs("transformers", "accelerate")
def test_a_hugging_face_compute_loss_that_keeps_its_loss(replay_server) -> None:
    """The script's arguments report to TensorBoard (not installed: the script alone fails at
    once) and save every 5 steps for 50 epochs; the replay reports and saves nothing and stops
    after the cap."""
    result = _verify(replay_server, "hf_compute_loss_keeps_loss.py")["hf_compute_loss_keeps_loss.py"]
    judgement = result.judgement
    assert (result.verdict, judgement.growth_meter, judgement.nodes_per_iteration) == (CONFIRMED_GROWTH, "graph", 7)
    assert (judgement.original_bytes_per_iteration, judgement.twin_bytes_per_iteration) == (F32, F32)
    assert (result.original.status, result.original.iterations) == ("capped", 10)


def test_a_framework_that_is_not_installed_is_the_verdict(monkeypatch) -> None:
    """No replay: the script would fail at its import (``None`` in ``sys.modules`` is how Python
    marks a module that cannot be imported)."""
    monkeypatch.setitem(sys.modules, "lightning", None)
    [result] = verify_findings([_findings("lightning_module_only.py")], Settings(limits=LIMITS))
    assert (result.verdict, result.judgement.inconclusive_reason) == (INCONCLUSIVE, "framework-not-installed")
    assert result.explanation.startswith("Framework not installed: lightning (the script imports it; "
                                         "`pip install lightning` where verify runs")


def test_which_frameworks_a_script_needs() -> None:
    optional = "try:\n    import transformers\nexcept ImportError:\n    transformers = None\n"
    assert missing_framework(optional) is None  # inside try: optional
    assert missing_framework("import pytorch_lightning as pl\nimport not_a_framework\n") in (
        None, "pytorch_lightning")  # None where it is installed
    text = ("from transformers import TrainerCallback\nimport lightning.pytorch as pl\n"
            "class Keep(TrainerCallback):\n    def on_step_end(self, args, state, control, **kw):\n        pass\n"
            "class Module(pl.LightningModule):\n    def training_step(self, batch, i):\n        pass\n"
            "class Plain:\n    def training_step(self, batch, i):\n        pass\n")
    keep = framework_class(text, 4)
    assert (keep.name, keep.base, keep.framework) == ("Keep", "TrainerCallback", "transformers")
    module = framework_class(text, 7)
    assert (module.name, module.base, module.framework) == ("Module", "pl.LightningModule", "lightning")
    assert framework_class(text, 10) is None


@pytest.mark.parametrize("function, phase", [
    ("training_step", "train"), ("compute_loss", "train"), ("forward", "train"), ("on_train_batch_end", "train"),
    ("validation_step", "validate"), ("on_validation_batch_end", "validate"), ("val_step", "validate"),
    ("test_step", "test"), ("predict_step", "predict"),
])
def test_the_phase_of_a_flagged_function(function: str, phase: str) -> None:
    assert phase_of(function) == phase


def test_lightning_overrides_keep_what_the_replay_does_not_need_to_change() -> None:
    class ModelCheckpoint:  # matched by class name, as Lightning's own (any subclass too)
        pass

    class Keeper:
        pass

    keeper = Keeper()
    arguments = {"accelerator": "gpu", "callbacks": [ModelCheckpoint(), keeper], "precision": "bf16-mixed"}
    overrides = lightning_overrides("train", 11, cuda=False, arguments=arguments)
    assert overrides["callbacks"] == [keeper]
    assert (overrides["accelerator"], overrides["max_steps"], overrides["max_epochs"]) == ("cpu", 11, -1)
    assert (overrides["logger"], overrides["enable_checkpointing"]) == (False, False)
    assert overrides["limit_val_batches"] == 11
    assert "precision" not in overrides
    validating = lightning_overrides("validate", 11, cuda=True, arguments={"accelerator": "gpu"})
    assert "accelerator" not in validating
    assert (validating["limit_train_batches"], validating["limit_val_batches"], validating["max_steps"]) == (1, 11, -1)
    ranked = lightning_overrides("train", 11, cuda=True, arguments={}, distributed=True)
    assert not {"devices", "num_nodes", "strategy"} & set(ranked)


@pytest.fixture
def child():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield process.pid
    process.kill()
    process.wait()


def test_worker_memory_is_attributed_to_the_replays_children(child: int) -> None:
    """Device memory of a child of this process is a worker's; of this process, the parent's; of
    a process already on the GPU before the watch, nobody's."""
    readings = {4_000_000: 2**20}  # on the GPU before the watch starts: not the replay's
    watch = WorkerWatch(lambda figures: None, reader=("test", lambda: dict(readings)))
    watch.start()
    watch.stop()
    readings.update({child: 547_356_672, os.getpid(): 2**29})
    assert child in descendants(os.getpid())
    watch.poll()
    figures = watch.figures()
    assert figures["workers"] == [{"pid": child, "device_bytes": 547_356_672}]
    assert (figures["parent_bytes"], figures["attributed"], figures["source"]) == (2**29, True, "test")


def test_worker_memory_settles_and_ends_the_watch(child: int) -> None:
    settled = threading.Event()
    seen: list[dict] = []
    readings: dict[int, int] = {}
    watch = WorkerWatch(lambda figures: (seen.append(figures), settled.set()), reader=("test", lambda: dict(readings)))
    watch.start()
    readings[child] = 5  # a worker made its context
    assert settled.wait(10)
    assert seen[0]["workers"] == [{"pid": child, "device_bytes": 5}]


def test_allocation_sites_read_the_snapshots_blocks(tmp_path: Path) -> None:
    frames = [{"filename": "/usr/lib/python3/site-packages/torch/nn/functional.py", "line": 2380, "name": "linear"},
              {"filename": str(tmp_path / "models" / "net.py"), "line": 12, "name": "forward"},
              {"filename": str(tmp_path / "train.py"), "line": 30, "name": "<module>"}]
    snapshot = {"segments": [{"address": 1000, "blocks": [
        {"size": 512, "state": "active_allocated", "frames": frames},
        {"size": 1024, "state": "inactive"},
        {"size": 512, "state": "active_allocated", "frames": frames[:1]}]}]}
    blocks = active_blocks(snapshot)
    assert sorted(blocks) == [1000, 2536]
    assert user_frame(blocks[1000]["frames"], str(tmp_path)) == (os.path.join("models", "net.py"), 12, "forward")
    assert user_frame(blocks[2536]["frames"], str(tmp_path)) is None


class _Storage:
    def __init__(self, address: int) -> None:
        self.address = address

    def data_ptr(self) -> int:
        return self.address


class _StorageRef:
    """What the live-storage meter's ``live_storages()`` gives: a weak reference with the
    storage's device and the iteration that created it."""

    def __init__(self, address: int, iteration: int, device: str = "cuda") -> None:
        self.storage, self.iteration, self.device = _Storage(address), iteration, device

    def __call__(self) -> _Storage:
        return self.storage


def test_allocation_sites_of_the_surviving_blocks(monkeypatch, tmp_path: Path) -> None:
    """The survivors of iterations 3 and 4 are matched with their blocks by address and credited
    to the innermost frame of the user's code; storages of other iterations, of the CPU, or in
    blocks with no user frame count for nothing."""
    import torch

    net = [{"filename": "/usr/lib/python3/site-packages/torch/nn/functional.py", "line": 2380, "name": "linear"},
           {"filename": str(tmp_path / "models" / "net.py"), "line": 12, "name": "forward"},
           {"filename": str(tmp_path / "train.py"), "line": 30, "name": "<module>"}]
    kept = [{"filename": str(tmp_path / "train.py"), "line": 31, "name": "<module>"}]
    snapshot = {"segments": [{"address": 1000, "blocks": [
        {"size": 512, "state": "active_allocated", "frames": net},  # 1000
        {"size": 512, "state": "active_allocated", "frames": net},  # 1512
        {"size": 1024, "state": "inactive"},  # 2024
        {"size": 512, "state": "active_allocated", "frames": net[:1]},  # 3048
        {"size": 2048, "state": "active_allocated", "frames": kept}]}]}  # 3560
    monkeypatch.setattr(torch.cuda.memory, "_snapshot", lambda: snapshot)
    monkeypatch.setattr(torch.cuda.memory, "_record_memory_history", lambda **settings: None)
    storages = [_StorageRef(1000, 3), _StorageRef(1512, 4), _StorageRef(3048, 3), _StorageRef(3560, 4),
                _StorageRef(1000, 1), _StorageRef(3560, 3, device="cpu")]
    meter = type("Meter", (), {"live_storages": lambda self: storages})()
    assert allocation_sites(meter, [3, 4], str(tmp_path)) == [
        {"file": "train.py", "line": 31, "function": "<module>", "blocks": 1, "bytes": 2048,
         "bytes_per_iteration": 1024},
        {"file": os.path.join("models", "net.py"), "line": 12, "function": "forward", "blocks": 2, "bytes": 1024,
         "bytes_per_iteration": 512}]


@pytest.mark.slow
@_needs("lightning")
def test_a_lightning_callback_hook_is_an_iteration(replay_server, tmp_path: Path) -> None:
    """A finding in a callback's ``on_train_batch_end`` (made by hand here: the norm of a weight
    that requires grad, kept after every step), replayed per call of the hook under the script's
    own trainer, driven by verify: one node per call (the norm's; the weight's AccumulateGrad is
    shared), the `.detach()` twin keeping the same 4-B floats and no node."""
    source = Path(__file__).resolve().parent / "data" / "lightning_callback_keeps_norms.py"
    script = tmp_path / "train.py"
    script.write_bytes(source.read_bytes())
    text = script.read_text()
    marker = "pl_module.net[0].weight.norm()"
    line = next(number for number, row in enumerate(text.splitlines(), 1) if marker in row)
    column = text.splitlines()[line - 1].index(marker)
    fix = Fix(".detach()", False, (Edit(line, column, line, column + len(marker), marker + ".detach()"),))
    finding = Diagnostic(str(script), line, column, "TML001", "kept", fix=fix)
    [result] = verify_findings([FileFindings(str(script), text, [finding])], Settings(limits=LIMITS),
                               server=replay_server)
    judgement = result.judgement
    assert (result.scope.kind, result.scope.name) == ("function", "on_train_batch_end")
    assert (result.verdict, judgement.growth_meter, judgement.nodes_per_iteration) == (CONFIRMED_GROWTH, "graph", 1)
    assert (judgement.original_bytes_per_iteration, judgement.twin_bytes_per_iteration) == (F32, F32)
    assert (result.original.status, result.original.iterations) == ("capped", 10)
