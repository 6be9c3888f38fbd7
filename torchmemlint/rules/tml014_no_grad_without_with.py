"""TML014 no-grad-without-with.

## What it does
Flags `torch.no_grad()`, `torch.inference_mode()` or `torch.enable_grad()` called as a bare
statement (the context-manager object is created and thrown away), and the class used in a
`with` without being called (`with torch.no_grad:`). `torch.set_grad_enabled(False)` is not
flagged: it is a function that switches the mode when called, and `@torch.no_grad` without
parentheses is a working decorator.

## Why is this bad?
Creating the object does not enter it: after a bare `torch.no_grad()` autograd is still on, so
every following forward pass records its graph and keeps its activations — none of the
intended saving (measured: `torch.is_grad_enabled()` is still `True` afterwards).
`with torch.no_grad:` raises `TypeError: 'type' object does not support the context manager
protocol` when it runs.

## Example
```python
model.eval()
torch.no_grad()
for x, y in val_loader:
    preds.append(model(x))
```

## Use instead
```python
model.eval()
with torch.no_grad():
    for x, y in val_loader:
        preds.append(model(x))
```

## Fix safety
`with torch.no_grad:` becomes `with torch.no_grad():` — **safe** (the original can only
raise). A bare call becomes a `with` block around the rest of its block, where that scope is
clear: the rest of the block defines no functions, classes or imports, runs no backward pass and
does not switch grad mode or call `.train()` again. That changes which code records
gradients, so it is **unsafe**. A bare call with nothing after it gets no fix.

## Runtime signature
None of the intended saving: grad stays enabled, so the peak is a training step's
(`torch.is_grad_enabled()` is still `True`), or a `TypeError` at run time.
"""
from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import wrap_in_with
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.prescreen import FileFacts
from torchmemlint.semantics.grad import DISABLING, ENABLING, SET_GRAD_ENABLED

GRAD_MODE_CLASSES = DISABLING | ENABLING


class NoGradWithoutWith(Rule):
    code = "TML014"
    name = "no-grad-without-with"
    message = "grad-mode context manager created but never entered; use it in a `with` statement"
    triggers = ("no_grad", "inference_mode", "enable_grad")

    def could_match(self, facts: FileFacts) -> bool:
        # A grad-mode class as an expression statement, or in a ``with`` without a call.
        return super().could_match(facts) and any(
            facts.qualify(spelled) in GRAD_MODE_CLASSES for spelled in (*facts.statement_expressions, *facts.bare_with_items)
        )

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        for expr_statement in model.tree.nodes(cst.Expr):
            manager = _grad_mode_class(model, expr_statement.value)
            if manager is not None:
                yield Finding(
                    expr_statement.value,
                    message=f"`{model.code(expr_statement.value)}` as a statement does nothing; "
                            f"use `with {manager}():` around the code it should cover",
                    fix=_wrap_rest_of_block(model, expr_statement),
                )
        for item in model.tree.nodes(cst.WithItem):
            if not isinstance(item.item, cst.Call) and _grad_mode_class(model, item.item) is not None:
                spelled = model.code(item.item)
                yield Finding(
                    item.item,
                    message=f"`with {spelled}:` raises TypeError; call it: `with {spelled}():`",
                    fix=NodeFix(f"call `{spelled}()`", safe=True,
                                replacements=[Replacement(item.item, cst.Call(func=item.item))]),
                )


def _grad_mode_class(model: SemanticModel, expr: cst.BaseExpression) -> Optional[str]:
    """How ``expr`` spells a grad-mode class (called or not), or None."""
    callee = expr.func if isinstance(expr, cst.Call) else expr
    if model.imports.qualify(callee) in GRAD_MODE_CLASSES:
        return model.code(callee)
    return None


def _wrap_rest_of_block(model: SemanticModel, expr_statement: cst.Expr) -> Optional[NodeFix]:
    line = model.tree.parent.get(expr_statement)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    block = model.tree.parent.get(line)
    if not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    rest = list(block.body[block.body.index(line) + 1:])
    if not rest or not _clear_scope(model, rest):
        return None
    value = expr_statement.value
    item = value if isinstance(value, cst.Call) else cst.Call(func=value)
    return NodeFix(f"wrap the rest of the block in `with {model.code(item)}:`", safe=False,
                   replacements=wrap_in_with(item, rest, replacing=line))


def _clear_scope(model: SemanticModel, statements: Sequence[cst.BaseStatement]) -> bool:
    """The statements are plainly what the bare call meant to cover: no definitions or imports
    (the call was not meant for them), no backward pass, no later switch of grad mode or of the
    model back to training."""
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return False
        if model.tree.descendants(statement, cst.Import) or model.tree.descendants(statement, cst.ImportFrom):
            return False
        for call in model.tree.descendants(statement, cst.Call):
            if model.calls.backward_roots(call):
                return False
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "train":
                return False
            qualified = model.imports.qualify(call.func)
            if qualified in GRAD_MODE_CLASSES or qualified in SET_GRAD_ENABLED:
                return False
    return True
