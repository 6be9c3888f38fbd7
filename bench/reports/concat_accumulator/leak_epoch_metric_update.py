# Source: https://github.com/pytorch/ignite/pull/967
# Report: an epoch-level metric re-concatenated every batch's predictions onto its running tensors in update(), O(N^2) copying over an eval epoch (reviewer also warned about GPU overflow)
# Shape: metric object's update() rebinds self._preds/self._targets with torch.cat each call; evaluate() calls update() once per batch
# Expect: TML008 line 29; TML008 line 30
from typing import Callable, Sequence

import torch


class EpochScore:
    """Collects all predictions of an epoch and scores them at the end."""

    def __init__(self, score_fn: Callable[[torch.Tensor, torch.Tensor], float]):
        self.score_fn = score_fn
        self.reset()

    def reset(self) -> None:
        self._preds = torch.tensor([], dtype=torch.float32)
        self._targets = torch.tensor([], dtype=torch.long)

    def update(self, output: Sequence[torch.Tensor]) -> None:
        y_pred, y = output
        if y_pred.ndimension() == 2 and y_pred.shape[1] == 1:
            y_pred = y_pred.squeeze(dim=-1)
        if y.ndimension() == 2 and y.shape[1] == 1:
            y = y.squeeze(dim=-1)
        y_pred = y_pred.to(self._preds)
        y = y.to(self._targets)
        self._preds = torch.cat([self._preds, y_pred], dim=0)  # expect: TML008
        self._targets = torch.cat([self._targets, y], dim=0)  # expect: TML008

    def compute(self) -> float:
        if self._preds.numel() == 0:
            raise RuntimeError("EpochScore needs at least one update before compute()")
        return self.score_fn(self._preds, self._targets)


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
