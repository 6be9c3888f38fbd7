"""TML019 module-stores-activation (off by default).

## What it does
Flags a graph-attached value — the output of a submodule, a loss, arithmetic on them — stored
on `self` inside `forward` of an `nn.Module` (`self.features = self.backbone(x)`,
`self.attn = attn`, `out, (self.h, self.c) = self.lstm(x, (self.h, self.c))`), or into a
container kept on `self` (`self.cache[i] = y`, `self.maps["stage1"] = x`). Detached values,
Python numbers, shapes and anything computed under `torch.no_grad()` are not flagged, nor
Transformer-XL memories (`self.mems = outputs[1]`), which the model returns detached. A class
whose base comes from a model library (`class Decoder(FairseqIncrementalDecoder)`: a base named
`*Model`, `*Module`, `*Encoder`, `*Decoder`, ...) and that defines `forward` counts as an
`nn.Module`; a function outside the class that `forward` calls with its `self`
(`_attend(self, x)`) is read as part of `forward`.

Off by default: stashing an activation is sometimes the point (feature-matching losses, an
auxiliary loss read by the training loop), so select it with `--select TML019`.

## Why is this bad?
The attribute keeps the tensor, and through its `grad_fn` the whole graph of the last forward
pass, alive after the step ends. Before `backward()` that is every saved activation; after it,
the graph nodes and the tensor's own storage. The memory is released only when the next
forward overwrites the attribute, so the next step's peak carries the previous step's graph on
top of its own. Stored in evaluation code (no backward), it is all the activations.

## Example
```python
class Net(nn.Module):
    def forward(self, x):
        self.features = self.backbone(x)
        return self.head(self.features)
```

## Use instead
```python
    def forward(self, x):
        features = self.backbone(x)
        self.features = features.detach()  # only if something reads it later
        return self.head(features)
```

## Fix safety
No fix: whether the stored value may be detached depends on who reads it. Code that builds a
loss from it (feature matching, auxiliary losses, stateful RNNs that backpropagate through the
stored state) needs the graph, and `.detach()` would silently cut that gradient.

## Runtime signature
No growth: the previous step's activations (and graph) stay alive between steps, raising the
peak of the next step.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.imports import dotted_name
from torchmemlint.semantics.vocabulary import names_segment_memories


class ModuleStoresActivation(Rule):
    code = "TML019"
    name = "module-stores-activation"
    message = "graph-attached value stored on self in forward(): its graph stays alive until the next forward pass"
    default_enabled = False
    triggers = ("forward",)

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for forward in _forward_code(model):
            for assign in model.scopes.scope_nodes(forward, cst.Assign):
                for target, value, position in _self_targets(assign):
                    if names_segment_memories(dotted_name(target)):
                        continue  # (returned detached by the model)
                    held = model.flow.value(value, assign)
                    if position is not None and held.elements is not None:
                        # (``x, self.state = self._layer(x)`` returning ``y, state.detach()``)
                        held = held.elements[position] if position < len(held.elements) else held
                    if held.graph:
                        yield Finding(target)


def _forward_code(model: SemanticModel) -> Iterator[cst.FunctionDef]:
    """The ``forward`` methods of modules, and the functions outside any class that a
    ``forward`` calls with its ``self`` (``_attend(self, x)``: the method's body moved out)."""
    forwards = [f for f in model.scopes.functions_by_name.get("forward", [])
                if model.scopes.is_torch_module_class(model.scopes.class_of(f))]
    yield from forwards
    for functions in model.scopes.functions_by_name.values():
        for function in functions:
            if model.scopes.class_of(function) is None and model.scopes.self_class(function) is not None and any(
                    model.scopes.function_of(site) in forwards for site in model.calls.call_sites(function)):
                yield function


def _self_targets(assign: cst.Assign) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression, Optional[int]]]:
    """``(self.<attr>, value it receives, position)`` (or ``self.<attr>[key]``) for each target of an
    assignment, unpacking tuples element-wise when the value is a tuple of the same length, else the
    whole value with the target's position in what it unpacks (None where nothing is unpacked)."""
    pending: list[tuple[cst.BaseExpression, cst.BaseExpression, Optional[int]]] = \
        [(t.target, assign.value, None) for t in assign.targets]
    while pending:
        target, value, position = pending.pop()
        if isinstance(target, cst.Attribute) and dotted_name(target.value) == "self":
            yield target, value, position
        elif isinstance(target, cst.Subscript) and (dotted_name(target.value) or "").startswith("self."):
            yield target, value, position  # ``self.cache[key] = y``: kept in a container of the module
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) and \
                len(value.elements) == len(target.elements) else None
            for index, element in enumerate(target.elements):
                pending.append((element.value, values[index].value, None) if values else
                               (element.value, value, index if position is None else None))
