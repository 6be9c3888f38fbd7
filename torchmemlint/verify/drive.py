"""Driving the common training frameworks for a few steps, inside a replay child.

A finding in a Lightning ``training_step``, a callback hook or a Hugging Face ``Trainer``'s
``compute_loss`` has no loop around it in the user's file: the framework calls it. When the
replayed script starts the framework itself (``Trainer(...).fit(model)``, ``trainer.train()``),
the replay must reach the flagged function quickly, call it at least as often as the cap, and
do nothing costly beside it (a logger, checkpoints written to disk, a progress bar, a
validation pass over a whole data set before the first training step). So this module wraps the
frameworks' constructors, once their modules are imported by the script (a framework that the
script does not import is never imported here):

- **Lightning** (``lightning`` and ``pytorch_lightning``): ``Trainer.__init__`` gets the user's
  arguments with only these overridden: ``logger=False``, ``enable_checkpointing=False`` (and
  no ``ModelCheckpoint`` or ``EarlyStopping`` in ``callbacks``: the first contradicts the flag,
  the second ends the run before the cap), ``enable_progress_bar=False``,
  ``enable_model_summary=False``, ``num_sanity_val_steps=0``, one process on one device
  (``devices=1``, ``num_nodes=1``, ``strategy="auto"``, except in a rank of ``verify
  --nproc-per-node``), ``accelerator="cpu"`` when the replay has no CUDA and the script asked
  for a GPU, no ``fast_dev_run``, ``max_time``, ``min_steps`` or ``min_epochs``, and the steps
  of the phase the flagged function runs in (``PHASES``): training, ``max_steps`` =
  ``steps`` over as many epochs as it takes; validation, one training batch per epoch (each
  epoch then validates); test and predict, a one-step fit if the script fits first. Every
  evaluation loop is bounded at ``steps`` batches (``limit_val_batches`` ...), so that a
  validation at an epoch's end or a ``trainer.validate()`` costs no more than the cap.
- **Hugging Face** (``transformers``): ``TrainingArguments.__post_init__`` first sets
  ``max_steps=steps``, ``report_to="none"``, ``save_strategy="no"``,
  ``load_best_model_at_end=False`` (it needs checkpoints), ``push_to_hub=False`` and
  ``disable_tqdm=True``; the rest is the user's. ``__post_init__`` is inherited by subclasses
  (``Seq2SeqTrainingArguments``), and also runs for the default arguments a ``Trainer`` makes
  when given none.

``steps`` is the replay's cap plus one: the controller stops the replay when the call after the
last measured one starts, so that the last iteration is measured at a boundary, not after the
script's own end.
"""
from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import inspect
import os
import sys
from typing import Any, Callable

# The modules that define what is wrapped, by framework.
LIGHTNING_MODULES = ("lightning.pytorch.trainer.trainer", "pytorch_lightning.trainer.trainer")
HF_MODULE = "transformers.training_args"
# Callbacks that contradict the overrides or end a run early, by class name.
_DROPPED_CALLBACKS = ("ModelCheckpoint", "EarlyStopping")
PHASES = ("train", "validate", "test", "predict")


def phase_of(function: str) -> str:
    """The phase of a Lightning run that calls ``function``: ``validation_step``,
    ``on_validation_batch_end`` → validate; ``test_step`` → test; ``predict_step`` → predict;
    everything else (``training_step``, ``forward``, ``compute_loss``, a helper) → train."""
    name = function.lower()
    for phase, words in (("validate", ("validation", "val_")), ("test", ("test",)), ("predict", ("predict",))):
        if any(word in name for word in words):
            return phase
    return "train"


def lightning_overrides(phase: str, steps: int, cuda: bool, arguments: dict, distributed: bool = False) -> dict:
    """The ``Trainer`` arguments that replace the user's (``arguments``) for a replay of
    ``phase`` that needs ``steps`` calls of the flagged function. ``distributed``: the replay
    is one rank of a torchrun launch (``verify --nproc-per-node``), whose ranks and devices are
    the launch's."""
    overrides: dict[str, Any] = {
        "logger": False, "enable_checkpointing": False, "enable_progress_bar": False, "enable_model_summary": False,
        "fast_dev_run": False, "max_time": None, "min_steps": None, "min_epochs": None, "num_sanity_val_steps": 0,
    }
    if not distributed:
        overrides.update(devices=1, num_nodes=1, strategy="auto")
    accelerator = arguments.get("accelerator", "auto")
    if not cuda and isinstance(accelerator, str) and accelerator not in ("auto", "cpu"):
        overrides["accelerator"] = "cpu"
    callbacks = arguments.get("callbacks")
    if callbacks is not None:
        listed = callbacks if isinstance(callbacks, (list, tuple)) else [callbacks]
        overrides["callbacks"] = [callback for callback in listed
                                  if not any(base.__name__ in _DROPPED_CALLBACKS for base in type(callback).__mro__)]
    # every evaluation loop is bounded (a script may call ``trainer.validate`` alone)
    overrides.update(limit_val_batches=steps, limit_test_batches=steps, limit_predict_batches=steps)
    if phase == "validate":
        overrides.update(limit_train_batches=1, max_epochs=steps, max_steps=-1, val_check_interval=None,
                         check_val_every_n_epoch=1)
    else:  # test and predict: a fit before them, if any, takes one step
        overrides.update(max_steps=steps if phase == "train" else 1, max_epochs=-1)
    return overrides


def hf_overrides(steps: int) -> dict:
    """The ``TrainingArguments`` fields set before the user's arguments are checked."""
    return {"max_steps": steps, "report_to": "none", "save_strategy": "no", "load_best_model_at_end": False,
            "push_to_hub": False, "disable_tqdm": True}


def _wrap_lightning(module: Any, phase: str, steps: int, cuda: bool) -> None:
    trainer = module.Trainer
    original = trainer.__init__
    parameters = list(inspect.signature(original).parameters)[1:]

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        arguments = {**dict(zip(parameters, args)), **kwargs}
        overrides = lightning_overrides(phase, steps, cuda, arguments, "LOCAL_RANK" in os.environ)
        # only what this version's Trainer takes (an argument renamed or removed in another is left out)
        arguments.update({name: value for name, value in overrides.items() if name in parameters})
        original(self, **arguments)

    trainer.__init__ = __init__


def _wrap_hf(module: Any, steps: int) -> None:
    arguments = module.TrainingArguments
    original = arguments.__post_init__

    @functools.wraps(original)
    def __post_init__(self):
        for name, value in hf_overrides(steps).items():
            if hasattr(self, name):  # a field of this version's TrainingArguments
                setattr(self, name, value)
        original(self)

    arguments.__post_init__ = __post_init__


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a function on a module right after it is executed, the first time it is imported."""

    def __init__(self, actions: dict[str, Callable[[Any], None]]) -> None:
        self._actions = actions

    def find_spec(self, fullname, path, target=None):
        action = self._actions.get(fullname)
        if action is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module):
            execute(module)
            del self._actions[fullname]
            action(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(phase: str, steps: int, cuda: bool) -> None:
    """Wrap the frameworks' constructors when (and if) the script imports them."""
    actions: dict[str, Callable[[Any], None]] = {
        name: functools.partial(_wrap_lightning, phase=phase, steps=steps, cuda=cuda) for name in LIGHTNING_MODULES}
    actions[HF_MODULE] = functools.partial(_wrap_hf, steps=steps)
    sys.meta_path.insert(0, _AfterImport(actions))
