# Source: https://github.com/meta-pytorch/torchrec/pull/1544
# Report: windowed AUC metric concatenated predictions/labels/weights onto its state on every update step (new allocation + full copy each call); reworked to keep a list and concatenate at compute time
# Shape: reworked version: update() appends the batch chunks to lists and evicts whole chunks that fall out of the window; torch.cat happens only in compute()
# Expect: near-miss: must be silent
from typing import Dict, List

import torch
from sklearn.metrics import roc_auc_score


class WindowedAUC:
    def __init__(self, n_tasks: int, window_size: int, device: torch.device):
        self._n_tasks = n_tasks
        self._window_size = window_size
        self._device = device
        self.reset()

    def reset(self) -> None:
        self._preds: List[torch.Tensor] = []
        self._labels: List[torch.Tensor] = []
        self._weights: List[torch.Tensor] = []
        self._num_samples = 0

    def update(self, *, predictions: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> None:
        self._preds.append(predictions.detach().double())
        self._labels.append(labels.double())
        self._weights.append(weights.double())
        self._num_samples += predictions.size(-1)
        # evict whole chunks once the oldest one is entirely outside the window
        while self._num_samples - self._preds[0].size(-1) >= self._window_size:
            self._num_samples -= self._preds[0].size(-1)
            self._preds.pop(0)
            self._labels.pop(0)
            self._weights.pop(0)

    def compute(self) -> Dict[str, float]:
        preds = torch.cat(self._preds, dim=-1)[:, -self._window_size:].cpu()
        labels = torch.cat(self._labels, dim=-1)[:, -self._window_size:].cpu()
        weights = torch.cat(self._weights, dim=-1)[:, -self._window_size:].cpu()
        return {
            f"auc_task_{t}": float(roc_auc_score(labels[t].numpy(), preds[t].numpy(), sample_weight=weights[t].numpy()))
            for t in range(self._n_tasks)
        }


def train(model, loader, optimizer, n_tasks, compute_every=1000, device="cuda"):
    auc = WindowedAUC(n_tasks, window_size=10_000_000, device=torch.device(device))
    for step, batch in enumerate(loader):
        batch = {k: v.to(device) for k, v in batch.items()}
        logits = model(batch["dense"], batch["sparse"])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, batch["labels"], weight=batch["weights"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        auc.update(predictions=torch.sigmoid(logits).T, labels=batch["labels"].T, weights=batch["weights"].T)
        if step % compute_every == 0:
            print(step, auc.compute())
