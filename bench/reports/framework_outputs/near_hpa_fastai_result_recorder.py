# Source: https://github.com/klu1211/pytorch-toolbox/blob/0d47d204cd26cdeed44c49a0783d5d35f8a3fc02/pytorch_toolbox/callbacks/learner_callbacks/recorders.py
# Report: fastai-v1 callbacks of a protein-atlas toolbox record per-sample predictions and targets for every batch of the epoch (train and val) to build a results table
# Shape: on_loss_begin receives the model's raw output (graph-attached while training); the to_numpy helper detaches and copies to host before the rows are kept in lists on the callback
# Expect: near-miss: must be silent
from enum import Enum

import numpy as np
import pandas as pd
import torch
from fastai.callback import Callback


class Phase(Enum):
    TRAIN = 1
    VAL = 2
    TEST = 3


def to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def determine_phase(train, last_target, label_key="label"):
    if train:
        return Phase.TRAIN
    return Phase.VAL if last_target.get(label_key) is not None else Phase.TEST


class ResultRecorder(Callback):
    _order = -10

    def __init__(self):
        self.names = []
        self.prob_preds = []
        self.targets = []
        self.phase = None

    def on_batch_begin(self, last_input, last_target, train, **kwargs):
        self.phase = determine_phase(train, last_target)
        self.names.extend(last_target["name"])
        if self.phase in (Phase.TRAIN, Phase.VAL):
            self.targets.extend(to_numpy(last_target["label"]))

    def on_loss_begin(self, last_output, **kwargs):
        prob_pred = to_numpy(torch.sigmoid(last_output))
        self.prob_preds.extend(prob_pred)

    def on_epoch_end(self, epoch, **kwargs):
        table = pd.DataFrame({"name": self.names, "prob": list(self.prob_preds)})
        if self.targets:
            table["label"] = list(self.targets)
        table.to_csv(f"results_epoch_{epoch}.csv", index=False)
        self.names, self.prob_preds, self.targets = [], [], []


class OutputRecorder(Callback):
    _order = -10

    def __init__(self, loss_wrapper):
        self.loss_wrapper = loss_wrapper
        self.history = []
        self.current = {}

    def on_loss_begin(self, last_output, **kwargs):
        probs = 1 / (1 + np.exp(-to_numpy(last_output)))
        self.current["prediction_probs"] = probs
        self.current["prediction"] = (probs >= 0.5).astype(np.float32)

    def on_batch_end(self, **kwargs):
        for loss in self.loss_wrapper.losses:
            self.current[type(loss).__name__] = to_numpy(loss.per_sample_loss)
        names, columns = zip(*self.current.items())
        for row in zip(*columns):
            self.history.append(dict(zip(names, row)))
