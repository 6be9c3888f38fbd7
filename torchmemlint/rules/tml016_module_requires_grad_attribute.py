"""TML016 module-requires-grad-attribute.

## What it does
Flags `module.requires_grad = False` (or `= True`) where `module` is an `nn.Module` — a model,
a submodule such as `self.encoder` or `model.backbone`, a loop variable over
`model.children()` — rather than a tensor or parameter.

## Why is this bad?
`requires_grad` is a tensor property. On a module the assignment just creates an ordinary
Python attribute: no parameter is frozen. The "frozen" part of the model still gets `.grad`
buffers (one per parameter, the parameters' size) on every backward pass, the optimizer keeps
updating it, and its activations are still saved for backward (measured: after
`linear.requires_grad = False`, `linear.weight.requires_grad` is still `True` and
`linear.weight.grad` is filled by `backward()`).

## Example
```python
model.encoder.requires_grad = False
for child in model.children():
    child.requires_grad = False
```

## Use instead
```python
model.encoder.requires_grad_(False)
for child in model.children():
    child.requires_grad_(False)
```
Setting it on a parameter or tensor (`for p in model.parameters(): p.requires_grad = False`,
`x.requires_grad = True`) is correct and not flagged.

## Fix safety
The fix rewrites the assignment to `module.requires_grad_(value)`. That really freezes (or
unfreezes) the parameters, which changes what the program trains, so it is **unsafe**.

## Runtime signature
No growth: the "frozen" parameters still receive `.grad` buffers on every backward (memory of
one extra copy of their size) and keep being updated.
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.imports import dotted_name


class ModuleRequiresGradAttribute(Rule):
    code = "TML016"
    name = "module-requires-grad-attribute"
    message = "`requires_grad` assigned on an nn.Module is a plain attribute: nothing is frozen; use `.requires_grad_(False)`"
    triggers = ("requires_grad",)

    def could_match(self, facts: FileFacts) -> bool:
        return super().could_match(facts) and facts.assigns_foreign_requires_grad

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for assign in model.tree.nodes(cst.Assign):
            for target in assign.targets:
                attribute = target.target
                if not (isinstance(attribute, cst.Attribute) and attribute.attr.value == "requires_grad"):
                    continue
                owner = attribute.value
                if dotted_name(owner) == "self":
                    continue  # a module's own flag attribute, set in its own methods
                if model.modules.is_module(owner, assign):
                    yield Finding(attribute, fix=_requires_grad_call(model, assign, owner))


def _requires_grad_call(model: SemanticModel, assign: cst.Assign, owner: cst.BaseExpression) -> Optional[NodeFix]:
    if len(assign.targets) != 1:
        return None
    call = cst.Call(func=cst.Attribute(value=owner, attr=cst.Name("requires_grad_")), args=[cst.Arg(assign.value)])
    return NodeFix(f"call `{model.code(owner)}.requires_grad_(...)`", safe=False,
                   replacements=[Replacement(assign, cst.Expr(call, semicolon=assign.semicolon))])
