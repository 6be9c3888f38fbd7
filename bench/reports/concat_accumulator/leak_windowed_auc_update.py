# Source: https://github.com/meta-pytorch/torchrec/pull/1544
# Report: windowed AUC metric concatenated predictions/labels/weights onto its state on every update step (new allocation + full copy each call); reworked to keep a list and concatenate at compute time
# Shape: metric computation keeps one-element lists of state tensors and rebinds element [0] with torch.cat([...][:, start:], new]) in update(), called every training batch
# Expect: TML008 line 31; TML008 line 32; TML008 line 33
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
        empty = lambda: torch.zeros((self._n_tasks, 0), dtype=torch.double, device=self._device)
        self._preds: List[torch.Tensor] = [empty()]
        self._labels: List[torch.Tensor] = [empty()]
        self._weights: List[torch.Tensor] = [empty()]

    def update(self, *, predictions: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> None:
        predictions = predictions.detach().double()
        labels = labels.double()
        weights = weights.double()
        num_samples = self._preds[0].size(-1)
        batch_size = predictions.size(-1)
        start = max(num_samples + batch_size - self._window_size, 0)
        self._preds[0] = torch.cat([self._preds[0][:, start:], predictions], dim=-1)  # expect: TML008
        self._labels[0] = torch.cat([self._labels[0][:, start:], labels], dim=-1)  # expect: TML008
        self._weights[0] = torch.cat([self._weights[0][:, start:], weights], dim=-1)  # expect: TML008

    def compute(self) -> Dict[str, float]:
        preds, labels, weights = self._preds[0].cpu(), self._labels[0].cpu(), self._weights[0].cpu()
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
