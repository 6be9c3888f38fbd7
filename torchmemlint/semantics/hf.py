"""Hugging Face ``Trainer`` set-ups: which calls build a Trainer, which ``TrainingArguments`` they
get (resolved within the file), and whether evaluation keeps every step's outputs on the device.

``Trainer.evaluate()`` with ``compute_metrics`` (and ``Trainer.predict()`` always) gathers the
logits of every evaluation step and concatenates them *on the accelerator*; only
``eval_accumulation_steps`` moves them to the CPU every N steps (``prediction_loss_only=True``
and ``batch_eval_metrics=True`` keep nothing)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from torchmemlint.semantics.imports import ImportTable, dotted_name
from torchmemlint.semantics.scopes import Scopes
from torchmemlint.semantics.tree import Tree

TRAINER_LIBRARIES = ("transformers.", "trl.")
# trl's preference/reward trainers return a few summary logits per step from their own
# prediction_step; SFTTrainer keeps the default full (batch x sequence x vocabulary) logits.
KEEPING_TRL_TRAINERS = frozenset({"SFTTrainer"})
# TrainingArguments and its subclasses (Seq2SeqTrainingArguments, trl's SFTConfig, DPOConfig ...).
ARGUMENT_CLASS_SUFFIXES = ("TrainingArguments", "Config")
# Heads whose outputs are a few numbers per example (not per token): keeping them all is small.
SMALL_OUTPUT_HEAD = re.compile(r"For(?:Sequence|Image|Audio|Video)Classification$|ForMultipleChoice$")
MAX_MODEL_DEPTH = 6
# Model settings that add per-layer, per-token tensors to the outputs.
PER_TOKEN_OUTPUTS = ("output_attentions", "output_hidden_states")
# Settings under which evaluation keeps nothing (or not on the device).
BOUNDING_SETTINGS = ("eval_accumulation_steps", "prediction_loss_only", "batch_eval_metrics")


@dataclass(frozen=True)
class TrainerSetup:
    """A Trainer construction ``call``, bound to ``name`` when assigned; ``arguments`` is the
    ``TrainingArguments(...)`` call it gets, ``resolved`` False when the file does not say (parsed
    from the command line, ``**config``, a parameter ...)."""

    call: cst.Call
    name: Optional[str]
    arguments: Optional[cst.Call]
    resolved: bool


class HFTrainers:
    def __init__(self, tree: Tree, imports: ImportTable, scopes: Scopes) -> None:
        self.tree = tree
        self.imports = imports
        self.scopes = scopes

    def setups(self) -> Iterator[TrainerSetup]:
        for call in self.tree.nodes(cst.Call):
            if not self._is_trainer_class(call.func):
                continue
            parent = self.tree.parent.get(call)
            name = None
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target,
                                                                                        cst.Name):
                name = parent.targets[0].target.value
            arguments, resolved = self._arguments_of(call)
            yield TrainerSetup(call, name, arguments, resolved)

    def _is_trainer_class(self, func: cst.BaseExpression) -> bool:
        qualified = self.imports.qualify(func)
        if qualified is not None:
            return _keeps_logits(qualified)
        local = self.scopes.classes_by_name.get(dotted_name(func) or "")
        return local is not None and any(_keeps_logits(b) for b in self.scopes.class_bases(local))

    def is_arguments_call(self, expr: Optional[cst.BaseExpression]) -> bool:
        if not isinstance(expr, cst.Call):
            return False
        qualified = self.imports.qualify(expr.func) or ""
        return qualified.startswith(TRAINER_LIBRARIES) and qualified.endswith(ARGUMENT_CLASS_SUFFIXES)

    def _arguments_of(self, call: cst.Call) -> tuple[Optional[cst.Call], bool]:
        if any(a.star for a in call.args):
            return None, False
        value = keyword(call, "args")
        if value is None:
            positional = [a for a in call.args if a.keyword is None]
            value = positional[1].value if len(positional) >= 2 else None
        if value is None:
            return None, True  # the Trainer's default TrainingArguments
        if self.is_arguments_call(value):
            return value, True  # type: ignore[return-value]
        if isinstance(value, cst.Name):  # ``args = TrainingArguments(...)`` / ``args = build_args(...)``
            bindings = self.scopes.bindings_of(value.value, call)
            made = [b.value if self.is_arguments_call(b.value) else self._made_by_helper(b.value) for b in bindings]
            if made and all(m is not None for m in made):
                return made[-1], True  # type: ignore[return-value]
        made = self._made_by_helper(value)
        if made is not None:
            return made, True
        if isinstance(value, cst.Name) and self.scopes.is_parameter(value.value, call):
            made = self._only_arguments_construction()
            if made is not None:  # ``def finetune(model, training_args)``, beside ``def get_training_args()``
                return made, True
        return None, False

    def _only_arguments_construction(self) -> Optional[cst.Call]:
        """The file's one ``TrainingArguments(...)`` call, where it is what a helper function of
        the file returns: the arguments a Trainer given them as a parameter gets, as far as the
        file says."""
        constructions = [call for call in self.tree.nodes(cst.Call) if self.is_arguments_call(call)]
        if len(constructions) != 1:
            return None
        helper = self.scopes.function_of(constructions[0])
        if helper is None or self.scopes.class_of(helper) is not None:
            return None
        return self._returned_arguments(helper)

    def _made_by_helper(self, value: cst.BaseExpression) -> Optional[cst.Call]:
        """``args=make_training_args(...)``: a plain function of the file whose every return is a
        ``TrainingArguments(...)`` call."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return None
        functions = [f for f in self.scopes.functions_by_name.get(value.func.value, ())
                     if self.scopes.class_of(f) is None]
        if len(functions) != 1:
            return None
        return self._returned_arguments(functions[0])

    def _returned_arguments(self, function: cst.FunctionDef) -> Optional[cst.Call]:
        """The ``TrainingArguments(...)`` call every return of ``function`` gives, directly or
        through a name bound to it (``args = TrainingArguments(...); return args``)."""
        made = []
        for returned in self.scopes.scope_nodes(function, cst.Return):
            value = returned.value
            if isinstance(value, cst.Name):
                bindings = self.scopes.bindings_of(value.value, returned)
                value = bindings[0].value if len(bindings) == 1 else None
            if not self.is_arguments_call(value):
                return None
            made.append(value)
        return made[-1] if made else None  # type: ignore[return-value]

    def keeps_outputs_on_device(self, setup: TrainerSetup) -> bool:
        """Evaluation gathers every step's outputs on the accelerator: no bounding setting in the
        arguments call, none assigned later (``args.eval_accumulation_steps = 4``)."""
        if not setup.resolved:
            return False
        if setup.arguments is not None:
            if any(a.star for a in setup.arguments.args):
                return False
            if any(_bounds(keyword(setup.arguments, s)) for s in BOUNDING_SETTINGS):
                return False
        return not any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value in BOUNDING_SETTINGS
            for assign in self.tree.nodes(cst.Assign) for t in assign.targets
        )

    def has_small_outputs(self, setup: TrainerSetup) -> bool:
        """The Trainer's model is built in the file with a per-example head
        (``AutoModelForSequenceClassification.from_pretrained(...)``, possibly wrapped as
        ``get_peft_model(model, config)``), so what evaluation keeps does not scale with
        sequence length."""
        model = keyword(setup.call, "model")
        if model is None:
            positional = [a for a in setup.call.args if a.keyword is None]
            model = positional[0].value if positional else None
        return self._small_head(model, setup.call, MAX_MODEL_DEPTH)

    def _small_head(self, expr: Optional[cst.BaseExpression], at: cst.CSTNode, depth: int) -> bool:
        if expr is None or depth == 0:
            return False
        if isinstance(expr, cst.Name):
            bindings = self.scopes.bindings_of(expr.value, at)
            return bool(bindings) and all(self._small_head(b.value, b.node, depth - 1) for b in bindings)
        if not isinstance(expr, cst.Call):
            return False
        func = expr.func
        owner = func.value if isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" else func
        if SMALL_OUTPUT_HEAD.search(self.imports.qualify(owner) or dotted_name(owner) or ""):
            return not self._outputs_per_token(expr, depth)
        positional = [a for a in expr.args if a.keyword is None]  # a wrapper: get_peft_model(model, cfg)
        return bool(positional) and self._small_head(positional[0].value, at, depth - 1)

    def _outputs_per_token(self, call: cst.Call, depth: int) -> bool:
        """``output_attentions=True`` or ``output_hidden_states=True`` given to the model, or to
        the config it is built from (``config=AutoConfig.from_pretrained(..., output_attentions=True)``):
        every layer's attention maps or states join the logits that evaluation keeps."""
        if any(_is_true(keyword(call, setting)) for setting in PER_TOKEN_OUTPUTS):
            return True
        config = keyword(call, "config")
        if isinstance(config, cst.Name) and depth > 0:
            return any(isinstance(b.value, cst.Call) and self._outputs_per_token(b.value, depth - 1)
                       for b in self.scopes.bindings_of(config.value, call))
        return isinstance(config, cst.Call) and self._outputs_per_token(config, depth - 1)

    def method_calls(self, setup: TrainerSetup, method: str) -> list[cst.Call]:
        """``<trainer>.<method>(...)`` calls on the name the setup is bound to."""
        if setup.name is None:
            return []
        calls = []
        for call in self.tree.nodes(cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == method and isinstance(func.value, cst.Name) \
                    and func.value.value == setup.name and \
                    any(b.value is setup.call for b in self.scopes.bindings_of(setup.name, call)):
                calls.append(call)
        return calls


def _keeps_logits(qualified: str) -> bool:
    """A Trainer class whose evaluation loop gathers the model's full outputs."""
    if qualified.startswith("transformers."):
        return qualified.endswith("Trainer")
    return qualified.startswith("trl.") and qualified.split(".")[-1] in KEEPING_TRL_TRAINERS


def _bounds(value: Optional[cst.BaseExpression]) -> bool:
    """A setting passed with a value other than None/False (a variable counts: it may bound)."""
    return value is not None and not (isinstance(value, cst.Name) and value.value == "False")


def keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The value passed as ``name=`` (None when absent or passed as ``None``)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            value = arg.value
            return None if isinstance(value, cst.Name) and value.value == "None" else value
    return None


def _is_true(value: Optional[cst.BaseExpression]) -> bool:
    return isinstance(value, cst.Name) and value.value == "True"
