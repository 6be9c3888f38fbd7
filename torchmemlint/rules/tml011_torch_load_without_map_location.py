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
The fix adds `map_location="cpu"`. It is **safe** where everything loaded goes into
`load_state_dict` — `model.load_state_dict(torch.load(p))`, or `state = torch.load(p)` whose
every use is `x.load_state_dict(state)` or `x.load_state_dict(state["model"])` — because
`load_state_dict` copies into the module's (or optimizer's) own tensors on their own device.
Elsewhere it is **unsafe**: code that used the loaded tensors (or a whole pickled model)
directly on the GPU would now compute on the CPU.

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
            yield Finding(call, fix=NodeFix('add `map_location="cpu"`', safe=_only_loaded_into_state_dicts(model, call),
                                            replacements=[Replacement(call, fixed)]))


def _only_loaded_into_state_dicts(model: SemanticModel, call: cst.Call) -> bool:
    """Whether what ``call`` loads only ever reaches ``load_state_dict`` (itself, or subscripted):
    then the tensors are copied onto the target's device and where they were loaded is unseen."""
    parent = model.tree.parent.get(call)
    if isinstance(parent, cst.Arg) or isinstance(parent, cst.Subscript):
        return _into_load_state_dict(model, call)
    assign = model.tree.parent.get(parent) if isinstance(parent, cst.AssignTarget) else parent
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or \
            not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    scope = model.scopes.scope_of(assign)
    reads = [n for n in model.scopes.scope_nodes(scope, cst.Name) if n.value == name and n is not assign.targets[0].target]
    # A nested function reading the name sees it too: not followed, so not safe.
    nested = [n for n in model.tree.descendants(scope, cst.Name) if n.value == name and model.scopes.scope_of(n) is not scope]
    return bool(reads) and not nested and all(_into_load_state_dict(model, read) for read in reads)


def _into_load_state_dict(model: SemanticModel, expr: cst.BaseExpression) -> bool:
    """``expr`` (or ``expr[key]``, ``expr[a][b]``) is the argument of a ``.load_state_dict()`` call."""
    parent = model.tree.parent.get(expr)
    while isinstance(parent, cst.Subscript) and parent.value is expr:
        expr, parent = parent, model.tree.parent.get(parent)
    if not isinstance(parent, cst.Arg) or parent.value is not expr:
        return False
    consumer = model.tree.parent.get(parent)
    return isinstance(consumer, cst.Call) and isinstance(consumer.func, cst.Attribute) and \
        consumer.func.attr.value == "load_state_dict"
