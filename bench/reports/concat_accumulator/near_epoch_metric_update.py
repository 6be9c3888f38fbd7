# Source: https://github.com/pytorch/ignite/pull/967
# Report: an epoch-level metric re-concatenated every batch's predictions onto its running tensors in update(), O(N^2) copying over an eval epoch (reviewer also warned about GPU overflow)
# Shape: same metric object, but update() only appends detached CPU chunks to lists; compute() does a single torch.cat at the end
# Expect: near-miss: must be silent
from typing import Callable, Sequence

import torch


class EpochScore:
    """Collects all predictions of an epoch and scores them at the end."""

    def __init__(self, score_fn: Callable[[torch.Tensor, torch.Tensor], float]):
        self.score_fn = score_fn
        self.reset()

    def reset(self) -> None:
        self._preds = []
        self._targets = []

    def update(self, output: Sequence[torch.Tensor]) -> None:
        y_pred, y = output
        if y_pred.ndimension() == 2 and y_pred.shape[1] == 1:
            y_pred = y_pred.squeeze(dim=-1)
        if y.ndimension() == 2 and y.shape[1] == 1:
            y = y.squeeze(dim=-1)
        self._preds.append(y_pred.detach().float().cpu())
        self._targets.append(y.detach().long().cpu())

    def compute(self) -> float:
        if not self._preds:
            raise RuntimeError("EpochScore needs at least one update before compute()")
        preds = torch.cat(self._preds, dim=0)
        targets = torch.cat(self._targets, dim=0)
        return self.score_fn(preds, targets)


def roc_auc(preds: torch.Tensor, targets: torch.Tensor) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(targets.numpy(), preds.numpy()))


def evaluate(model, loader, device="cuda"):
    metric = EpochScore(roc_auc)
    model.eval()
    with torch.no_grad():
        for batch in loader:
            x, y = batch["image"].to(device), batch["label"].to(device)
            logits = model(x)
            metric.update((torch.sigmoid(logits), y))
    return metric.compute()
