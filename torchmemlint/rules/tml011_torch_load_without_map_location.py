"""TML011 torch-load-without-map-location.

## What it does
Flags `torch.load(...)` called without `map_location` (neither as keyword nor as the second
positional argument). Off by default: enable it with `--select TML011`.

## Why is this bad?
`torch.load` restores every tensor onto the device it was saved from. A checkpoint written
during GPU training comes back on `cuda:0` — in every process that loads it, before any
`.to(device)` runs. Loading a large checkpoint therefore spikes memory on GPU 0 (with several
ranks on one host, each rank puts a copy on GPU 0 and the first one runs out of memory), and it
fails outright on a machine without that GPU.

## Example
```python
state = torch.load("checkpoint.pt")
model.load_state_dict(state["model"])
```

## Use instead
```python
state = torch.load("checkpoint.pt", map_location="cpu")
model.load_state_dict(state["model"])  # copies into the model's own device
```
A call that forwards `**kwargs` is left alone (the caller may pass `map_location`).

## Fix safety
The fix adds `map_location="cpu"`. It is **unsafe**: code that used the loaded tensors directly
on the GPU (without `load_state_dict` or `.to(device)`) would now compute on the CPU.

## Runtime signature
A peak on the saving device (GPU 0) while loading, before any `.to()`; no growth.
"""
from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import add_keyword_argument
from torchmemlint.semantics import SemanticModel


class TorchLoadWithoutMapLocation(Rule):
    code = "TML011"
    name = "torch-load-without-map-location"
    message = "torch.load() without map_location restores tensors onto the device they were saved from (often all on GPU 0); pass map_location"
    default_enabled = False
    triggers = ("load",)

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for call in model.tree.nodes(cst.Call):
            if model.imports.qualify(call.func) != "torch.load":
                continue
            if any(arg.star for arg in call.args):  # ``*args`` / ``**kwargs`` may carry it
                continue
            if any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in call.args):
                continue
            if sum(1 for arg in call.args if arg.keyword is None) >= 2:  # torch.load(f, "cpu")
                continue
            fixed = add_keyword_argument(call, "map_location", cst.SimpleString('"cpu"'))
            yield Finding(call, fix=NodeFix('add `map_location="cpu"`', safe=False,
                                            replacements=[Replacement(call, fixed)]))
