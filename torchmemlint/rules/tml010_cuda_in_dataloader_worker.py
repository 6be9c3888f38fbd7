"""TML010 cuda-in-dataloader-worker.

## What it does
Flags moving data onto a CUDA device — `.cuda()`, `.to("cuda")`, `.to(device)` where `device` is
surely CUDA, a `torch` factory with `device="cuda"` — inside code that `DataLoader` worker
processes run: a Dataset's `__getitem__` / `__getitems__` / `__iter__` (and what they call: the
Dataset's methods, the file's functions, the `__call__` of an object of the file the Dataset was
built with, `self.transform(img)` with `FrameDataset(paths, transform=GpuResize(224))`) or a
collate function (passed as `collate_fn=`, or named `collate*`).

## Why is this bad?
With `num_workers > 0` that code runs in worker processes. Under the default `fork` start
method on Linux, a worker touching CUDA after the parent initialised it fails with
"Cannot re-initialize CUDA in forked subprocess"; under `spawn` (the default on Windows and
macOS, or when set explicitly) every worker creates its own CUDA context — hundreds of MiB of
device memory per worker — and tensors handed back from workers are shared through CUDA IPC.
Even with `num_workers=0` it moves samples one at a time instead of one batch.

A Dataset whose DataLoaders in the same file all run without workers (`num_workers` unset or 0)
stays silent.

## Example
```python
class ImageDataset(Dataset):
    def __getitem__(self, idx):
        image = self.load(idx)
        return image.cuda(), self.labels[idx]
```

## Use instead
```python
class ImageDataset(Dataset):
    def __getitem__(self, idx):
        return self.load(idx), self.labels[idx]

loader = DataLoader(dataset, batch_size=64, num_workers=8, pin_memory=True)
for images, labels in loader:
    images = images.to(device, non_blocking=True)
```

## Fix safety
No fix. The transfer has to move to where batches are consumed (the training loop), which the
linter cannot pick for the user; deleting it alone would hand CPU tensors to code that expects
them on the GPU.

## Runtime signature
With workers: the "Cannot re-initialize CUDA in forked subprocess" error, or one CUDA context
per worker (device memory grows by the context size for every worker started).
"""
from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchmemlint.rules.base import Finding, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.datasets import UNRESOLVED_DATASET_BASES, WORKER_METHODS
from torchmemlint.semantics.prescreen import FileFacts


class CudaInDataloaderWorker(Rule):
    code = "TML010"
    name = "cuda-in-dataloader-worker"
    message = "CUDA in DataLoader worker code: with num_workers>0 it fails in forked workers or creates a CUDA context per worker; move batches to the GPU in the training loop"
    triggers = ("cuda",)

    def could_match(self, facts: FileFacts) -> bool:
        # ``Datasets.worker_functions``: a Dataset class's worker methods, or a collate function
        # (named ``collat*``, or passed as ``collate_fn=``).
        if not super().could_match(facts):
            return False
        local_classes = {cls.name for cls in facts.classes}
        return b"collate_fn" in facts.source or any("collat" in name.lower() for name in facts.function_names) or any(
            "collat" in cls.name.lower() or (cls.methods & set(WORKER_METHODS) and (
                {"__getitem__", "__len__"} <= cls.methods or any(
                    base in UNRESOLVED_DATASET_BASES or base in local_classes
                    or (facts.qualify(base) or base).endswith("Dataset") for base in cls.bases)))
            for cls in facts.classes
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        workers = model.datasets.worker_functions
        if not workers:
            return
        for function, role in workers.items():
            if model.datasets.runs_in_main_process(function):
                continue
            for call in model.tree.descendants(function, cst.Call):
                if model.devices.moves_to_cuda(call) and _innermost_function(model, call) is function:
                    yield Finding(call, message=f"CUDA in {role}, which DataLoader workers run: with num_workers>0 "
                                                f"it fails in forked workers or creates a CUDA context per worker; "
                                                f"move batches to the GPU in the training loop")


def _innermost_function(model: SemanticModel, node: cst.CSTNode):
    for ancestor in model.tree.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return ancestor
    return None
