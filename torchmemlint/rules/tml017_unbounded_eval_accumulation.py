"""TML017 unbounded-eval-accumulation.

## What it does
Flags a Hugging Face `Trainer` (also `Seq2SeqTrainer`, trl trainers, and subclasses defined in
the file) that evaluates with `compute_metrics=` while its `TrainingArguments` (resolved in the
same file, also as the file's one construction that a helper returns when the Trainer gets them
as a parameter) set no `eval_accumulation_steps` (reported on the `Trainer(...)` call, with its
`compute_metrics=` as the related location), and `trainer.predict(...)` on such a trainer.
Silent when the arguments cannot be resolved in the file (parsed from the command line,
`**config`), when they set `eval_accumulation_steps`, `prediction_loss_only=True` or
`batch_eval_metrics=True`, when the Trainer gets `preprocess_logits_for_metrics=` (the documented
way to shrink what is kept), when nothing is evaluated (no `eval_dataset`, no `.evaluate()`), or
when the model is built in the file with a per-example head (`...ForSequenceClassification`,
`...ForImageClassification`, `...ForMultipleChoice`, also wrapped as `get_peft_model(model, ...)`):
a few numbers per example do not threaten device memory — unless the model or its config asks
for `output_attentions=True` or `output_hidden_states=True`, which add every layer's per-token
tensors to what evaluation keeps.

Also flags the return of a LightningModule's `training_step` / `validation_step` / `test_step` /
`predict_step` when the module overrides the 1.x hook `<stage>_epoch_end(self, outputs)` and the
step returns per-example tensors (logits, predictions, masks, targets on the device; the loss and
scalar metrics are fine), or returns entries other than `loss` that still hold the step's
autograd graph (`{"loss": loss, "kl": kl}`: Lightning detaches only `loss`, so every step's graph
stays until the epoch ends): Lightning collects every step's return value for that hook. And
`trainer.predict(...)` with `return_predictions` left on (even where it drops the result), in a
file whose LightningModule's `predict_step` returns such tensors (or a model output it cannot type
further, `return self(x)`): Lightning keeps every step's return value for the list it returns.
That one is reported on the `trainer.predict(...)` call, where the setting goes, with the returns
as related locations.

## Why is this bad?
To call `compute_metrics` once at the end, the evaluation loop gathers the logits and labels of
every evaluation step and concatenates them *on the accelerator*; only `eval_accumulation_steps`
makes it move them to the CPU every N steps. Device memory therefore grows with the size of the
evaluation set — a language model's logits are batch x sequence x vocabulary floats per step —
and evaluation runs out of memory long after training fit. `Trainer.predict()` always keeps the
predictions, so it grows the same way.

## Example
```python
args = TrainingArguments(output_dir="out", per_device_eval_batch_size=16, eval_strategy="epoch")
trainer = Trainer(model=model, args=args, train_dataset=train_ds, eval_dataset=val_ds,
                  compute_metrics=compute_metrics)
```

## Use instead
```python
args = TrainingArguments(output_dir="out", per_device_eval_batch_size=16, eval_strategy="epoch",
                         eval_accumulation_steps=8)
```
or reduce what is kept with `preprocess_logits_for_metrics` (e.g. the argmax of the logits).

## Fix safety
When the `TrainingArguments(...)` call is in the file, the fix adds `eval_accumulation_steps=8`
to it: at most 8 steps of outputs stay on the device, and the host-side concatenation (which
copies everything gathered so far at each transfer) runs 8 times less often than with 1. The
metrics are the same, but the value trades evaluation speed for memory and is a choice the
user should review, so the fix is **unsafe**.

For the Lightning epoch-end case there is no fix: what to return instead (a metric object updated
in the step, `.cpu()` copies) is the author's call. Where the result of `trainer.predict(...)` is
dropped (the call is a statement of its own), the fix passes `return_predictions=False`: the list
nobody reads is not built, and prediction-writer callbacks still get every batch, so the fix is
**safe**; where the caller reads the list, there is no fix.

## Runtime signature
Device memory grows with the number of evaluation steps until evaluation ends (or OOMs).
"""
from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from torchmemlint.rules.base import Finding, NodeFix, Replacement, Rule
from torchmemlint.rules.edits import add_keyword_argument
from torchmemlint.semantics import SemanticModel
from torchmemlint.semantics.flow import NUMBER, OTHER, TENSOR, Value
from torchmemlint.semantics.hf import TrainerSetup, keyword
from torchmemlint.semantics.imports import dotted_name

EVAL_ACCUMULATION_STEPS = 8
_LIGHTNING_STAGES = ("training", "validation", "test", "predict")
LIGHTNING_MESSAGE = ("Lightning keeps every {step} output for {end}: {kept} of the whole epoch pile up on "
                     "the device; return only the loss and scalars, or update a metric (torchmetrics) in the step")
GRAPH_MESSAGE = ("Lightning keeps every {step} output for {end}, detaching only `loss`: the autograd graph "
                 "behind {kept} stays alive for every step of the epoch; return them `.detach()`ed")
LIGHTNING_NO_FIX = ("no automatic fix: what the epoch end needs of each step's outputs is the author's call "
                    "(move them to the CPU, or keep only metrics)")
GRAPH_NO_FIX = ("no automatic fix: detach what the epoch end only reads (`.detach()`), or keep the graph if it "
                "differentiates it there")
LIGHTNING_PREDICT_MESSAGE = ("Lightning keeps every predict_step output for the list `trainer.predict()` returns: {kept} "
                             "of every batch pile up on the device; pass `return_predictions=False` where a writer "
                             "callback already has each batch, or return `.cpu()` copies from the step")
LIGHTNING_PREDICT_NO_FIX = ("no automatic fix: the caller reads the list `trainer.predict()` returns; return `.cpu()` "
                            "copies from `predict_step`")
PREDICT_MESSAGE = ("Trainer.predict() keeps every step's predictions on the device without eval_accumulation_steps; "
                   "set it in TrainingArguments")


class UnboundedEvalAccumulation(Rule):
    code = "TML017"
    name = "unbounded-eval-accumulation"
    message = ("Trainer with compute_metrics concatenates all evaluation logits on the device; set "
               "eval_accumulation_steps in TrainingArguments")
    triggers = ("Trainer", "_epoch_end", "predict_step")

    def check(self, model: SemanticModel) -> Iterator[Finding]:
        hf = model.hf
        for setup in hf.setups():
            if not hf.keeps_outputs_on_device(setup) or hf.has_small_outputs(setup):
                continue
            fix = _add_accumulation_steps(setup)
            no_fix = "" if fix is not None else \
                "no automatic fix: the `TrainingArguments(...)` this Trainer gets is not built in this file"
            metrics = _keyword_arg(setup.call, "compute_metrics")
            if metrics is not None:
                if keyword(setup.call, "preprocess_logits_for_metrics") is None and _evaluates(model, setup):
                    # (reported on the Trainer, where readers look for it and put a ``noqa``; the
                    # ``compute_metrics=`` that makes it gather every step's logits is related)
                    yield Finding(setup.call, fix=fix, no_fix=no_fix,
                                  related=[(metrics, "`compute_metrics` is given all evaluation logits at once")])
                continue
            for predict in hf.method_calls(setup, "predict"):
                yield Finding(predict, message=PREDICT_MESSAGE, fix=fix, no_fix=no_fix)
        yield from _lightning_epoch_outputs(model)


def _lightning_epoch_outputs(model: SemanticModel) -> Iterator[Finding]:
    """A LightningModule (1.x API) whose ``<stage>_epoch_end(self, outputs)`` receives every
    ``<stage>_step`` output: each return holding per-example tensors (logits, predictions,
    masks) piles up on the device until the epoch ends."""
    for cls in model.tree.nodes(cst.ClassDef):
        if not model.scopes.is_lightning_module(cls):
            continue
        for stage in _LIGHTNING_STAGES:
            step = model.calls.method_of(cls, f"{stage}_step")
            if step is None or not _has_epoch_end_outputs(model, cls, stage):
                continue
            for ret, message, kept, no_fix in _kept_returns(model, step):
                yield Finding(ret, message=message.format(step=f"{stage}_step", end=f"{stage}_epoch_end(outputs)",
                                                          kept=kept), no_fix=no_fix)
    yield from _predictions_kept(model)


def _kept_returns(model: SemanticModel, step: cst.FunctionDef) -> Iterator[tuple[cst.Return, str, str, str]]:
    """The returns of a Lightning ``<stage>_step`` whose value Lightning would keep to harm:
    entries still holding the step's graph, else per-example device tensors; with the message,
    what is kept (spelled) and why there is no fix."""
    for ret in model.scopes.scope_nodes(step, cst.Return):
        if ret.value is None:
            continue
        returned = model.flow.value(ret.value, ret)
        # Graphs first: they hold the step's activations, whatever the entries' size.
        graphs = _graph_parts(returned)
        message, kept, no_fix = (GRAPH_MESSAGE, graphs, GRAPH_NO_FIX) if graphs else \
            (LIGHTNING_MESSAGE, _per_example_parts(returned, step.name.value == "predict_step"), LIGHTNING_NO_FIX)
        if kept:
            yield ret, message, ", ".join(f"`{k}`" for k in kept), no_fix


def _predictions_kept(model: SemanticModel) -> Iterator[Finding]:
    """``trainer.predict(...)`` with ``return_predictions`` left on, in a file whose
    LightningModule's ``predict_step`` returns per-example device tensors: Lightning keeps every
    step's output for the list it returns, also where the caller drops that list (a
    prediction-writer callback that already wrote each batch). Reported on the call, where
    ``return_predictions=False`` goes; the returns are related."""
    kept = [(ret, parts) for cls in model.tree.nodes(cst.ClassDef) if model.scopes.is_lightning_module(cls)
            and (step := model.calls.method_of(cls, "predict_step")) is not None
            and not _has_epoch_end_outputs(model, cls, "predict")
            for ret, _, parts, _ in _kept_returns(model, step)]
    if not kept:
        return
    for call in model.tree.nodes(cst.Call):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "predict" and _is_trainer(model, func.value)):
            continue
        returned = keyword(call, "return_predictions")
        if returned is not None and not (isinstance(returned, cst.Name) and returned.value == "True"):
            continue
        fix, no_fix = None, LIGHTNING_PREDICT_NO_FIX
        if isinstance(model.tree.parent.get(call), cst.Expr) and returned is None:
            # (the list is dropped: not building it changes nothing the program reads)
            fix, no_fix = NodeFix("pass return_predictions=False", safe=True, replacements=[
                Replacement(call, add_keyword_argument(call, "return_predictions", cst.Name("False")))]), ""
        yield Finding(call, message=LIGHTNING_PREDICT_MESSAGE.format(kept=kept[0][1]),
                      related=[(ret, "returned here on every step") for ret, _ in kept], fix=fix, no_fix=no_fix)


def _has_epoch_end_outputs(model: SemanticModel, cls: cst.ClassDef, stage: str) -> bool:
    epoch_end = model.calls.method_of(cls, f"{stage}_epoch_end")
    return epoch_end is not None and len(epoch_end.params.params) >= 2


def _is_trainer(model: SemanticModel, receiver: cst.BaseExpression) -> bool:
    """Named a trainer, or bound to a ``Trainer(...)`` (Lightning's, or one of this file)."""
    if "trainer" in (dotted_name(receiver) or "").lower():
        return True
    return isinstance(receiver, cst.Name) and any(
        built.endswith("Trainer") for built in model.scopes.classes_built_into(receiver, receiver))


def _graph_parts(value: Value) -> list[str]:
    """The keys of a returned dict, other than ``loss`` (which Lightning detaches before it keeps
    the output), whose values hold the step's autograd graph."""
    return [key for key, part in value.fields or () if key != "loss" and part.graph]


def _per_example_parts(value: Value, predictions: bool) -> list[str]:
    """The keys of a returned dict (or "the output") that hold device tensors bigger than one
    number: not the loss, not a scalar metric. ``predictions``: what ``predict_step`` returns,
    where a model's output the flow cannot type further (``self(data)``) is predictions too (a
    training step's may be a dict holding only the loss)."""
    def big(part: Value) -> bool:
        return (part.device or part.graph) and not part.scalar and not part.loss and part.kind not in (NUMBER, OTHER)
    if value.fields is not None:
        return [key for key, part in value.fields if big(part)]
    return ["the output"] if big(value) and (value.kind == TENSOR or value.kind is None and predictions) else []


def _keyword_arg(call: cst.Call, name: str) -> Optional[cst.Arg]:
    if keyword(call, name) is None:
        return None
    return next(a for a in call.args if a.keyword is not None and a.keyword.value == name)


def _evaluates(model: SemanticModel, setup: TrainerSetup) -> bool:
    return keyword(setup.call, "eval_dataset") is not None or bool(model.hf.method_calls(setup, "evaluate"))


def _add_accumulation_steps(setup: TrainerSetup) -> Optional[NodeFix]:
    if setup.arguments is None:
        return None
    value = cst.Integer(str(EVAL_ACCUMULATION_STEPS))
    new = add_keyword_argument(setup.arguments, "eval_accumulation_steps", value)
    return NodeFix(f"set eval_accumulation_steps={EVAL_ACCUMULATION_STEPS}", safe=False,
                   replacements=[Replacement(setup.arguments, new)])
