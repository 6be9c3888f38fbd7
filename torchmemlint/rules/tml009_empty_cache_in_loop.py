"""TML009 empty-cache-in-loop.

## What it does
Flags `torch.cuda.empty_cache()` called on every iteration of a training or evaluation loop
(a loop that runs a forward pass, a backward pass or an optimizer step itself, or iterates a
loader), in a helper of the file that such a loop calls on every iteration, or in a per-step
method (`training_step`, `forward`, a Hugging Face `TrainerCallback`'s `on_step_end`, ...) —
also under the main process's check (`if accelerator.is_main_process:`, `if is_root_worker():`),
which holds on every step of that process. Off by default: enable it with `--select TML009`.

## Why is this bad?
`empty_cache()` frees no live tensor: it only hands the caching allocator's *unused* blocks back
to the driver. It synchronizes the device, and the next step has to `cudaMalloc` the same blocks
again, which is slow — so per step it only costs time. It is no fix for a leak (live memory
stays where it is) and no fix for an out-of-memory error either: the allocator already releases
its cache and retries before it raises one. What it changes is the number `nvidia-smi` shows.

Calls once per epoch, between models, under a condition (every N steps with
`if step % 100 == 0:`, behind a configuration flag) or in an `except` handler that recovers from
an out-of-memory error stay silent.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    torch.cuda.empty_cache()
```

## Use instead
```python
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
```

## Fix safety
The fix deletes the call (comment lines above it stay). It changes no value the program
computes, but it is **unsafe**: the process keeps its cached blocks reserved, so other processes
sharing the GPU (a second training run, a data-loading or serving process) see less free memory
and may run out where they did not before, and the reserved figure `nvidia-smi` shows goes up.

## Runtime signature
No live memory is freed (allocated bytes are the same with and without the call); reserved
memory drops after each call and is re-allocated in the next step, which runs slower.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Rule
from torchmemlint.rules.edits import remove_statement
from torchmemlint.semantics import SemanticModel


class EmptyCacheInLoop(Rule):
    code = "TML009"
    name = "empty-cache-in-loop"
    message = "torch.cuda.empty_cache() every step frees no live tensor; it only synchronizes and makes the next step re-allocate"
    default_enabled = False
    triggers = ("empty_cache",)

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for call in model.tree.nodes(cst.Call):
            if model.imports.qualify(call.func) != "torch.cuda.empty_cache":
                continue
            iteration = model.iterations.batch_iteration(call)
            if iteration is None or not model.iterations.runs_every_iteration(call, iteration):
                continue
            yield Finding(call, fix=_removal(model, call))


def _removal(model: SemanticModel, call: cst.Call) -> Optional[NodeFix]:
    expr = model.tree.parent.get(call)
    statement = model.tree.parent.get(expr) if isinstance(expr, cst.Expr) else None
    block = model.tree.parent.get(statement) if isinstance(statement, cst.SimpleStatementLine) else None
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None  # the call is part of an expression, or the only statement of a one-line block
    return NodeFix("remove the call", safe=False, replacements=[remove_statement(block, statement, expr)])
