# Source: https://github.com/braindecode/braindecode/pull/384
# Report: skorch's cached EpochScoring keeps every validation y_pred on the GPU (skorch issue #509); braindecode's cropped-trial scoring OOMed until its on_batch_end moved the stored preds to CPU
# Shape: the fix as merged: CroppedTrialEpochScoring.on_batch_end calls the caching parent, then replaces the just-cached y_pred with its .cpu() copy, so no GPU tensor outlives the batch
# Expect: near-miss: must be silent
import numpy as np
import torch
from skorch.dataset import unpack_data
from skorch.utils import to_numpy


class CachedEpochScoring:
    """Minimal stand-in for skorch.callbacks.EpochScoring with use_caching=True."""

    def __init__(self, scoring, lower_is_better=True, on_train=False, use_caching=True):
        self.scoring = scoring
        self.lower_is_better = lower_is_better
        self.on_train = on_train
        self.use_caching = use_caching
        self._initialize_cache()

    def _initialize_cache(self):
        self.y_trues_ = []
        self.y_preds_ = []

    def on_batch_end(self, net, batch, y_pred, training, **kwargs):
        if not self.use_caching or training != self.on_train:
            return
        _X, y = unpack_data(batch)
        if y is not None:
            self.y_trues_.append(y)
        self.y_preds_.append(y_pred)


class CroppedTrialEpochScoring(CachedEpochScoring):
    def _initialize_cache(self):
        super()._initialize_cache()
        self.window_inds_ = []

    def on_batch_end(self, net, batch, y_pred, training, **kwargs):
        # the parent caches y_pred as it came out of the module (on the GPU)
        super().on_batch_end(net, batch, y_pred, training, **kwargs)
        if self.use_caching and training == self.on_train:
            self.y_preds_[-1] = self.y_preds_[-1].cpu()

    def on_epoch_end(self, net):
        preds = np.concatenate([y_pred.cpu().numpy() for y_pred in self.y_preds_])
        window_ys = np.concatenate([y.cpu().numpy() for y in self.y_trues_])
        i_window_in_trials = np.concatenate([i[0].cpu().numpy() for i in self.window_inds_])
        first_window = np.diff(i_window_in_trials, prepend=[np.inf]) != 1
        trial_ys = window_ys[first_window]
        trial_preds = np.stack([p.mean(axis=-1) for p in np.split(preds, np.flatnonzero(first_window)[1:])])
        score = self.scoring(trial_ys, trial_preds.argmax(axis=1))
        net.history.append({"valid_trial_accuracy": score})
        return score


class EEGClassifier:
    def __init__(self, module, criterion, device="cuda"):
        self.module = module.to(device)
        self.criterion_ = criterion
        self.device = device
        self.history = []
        self.valid_scoring = CroppedTrialEpochScoring(
            scoring=lambda y, p: float((y.reshape(-1) == p).mean()),
            lower_is_better=False,
            on_train=False,
        )

    def evaluation_step(self, X):
        self.module.eval()
        with torch.no_grad():
            return self.module(X.to(self.device))

    def run_valid_epoch(self, iterator):
        self.valid_scoring._initialize_cache()
        valid_losses = []
        for X, y, i in iterator:
            y_pred = self.evaluation_step(X)
            loss = self.criterion_(y_pred.mean(dim=-1), y.to(self.device))
            valid_losses.append(loss.item())
            self.valid_scoring.window_inds_.append(i)
            self.valid_scoring.on_batch_end(self, (X, y), y_pred=y_pred, training=False)
        self.history.append({"valid_loss": float(np.mean(valid_losses))})
        return self.valid_scoring.on_epoch_end(self)

    def predict_proba(self, iterator):
        return np.concatenate([to_numpy(self.evaluation_step(X)) for X, _, _ in iterator])
