# Source: https://github.com/facebookresearch/demucs/blob/e976d93ecc3865e5757426930257e200846a520a/demucs/solver.py
# Report: audit of the Demucs source-separation solver: _run_one_epoch builds a dict of live losses each batch (total loss, weighted reconstruction, one reco per source, grad norm) and feeds it to an EMA() averaging closure; the repo's closure takes float(value), this is the variant it avoided, where the closure sums the tensors themselves so its running totals chain every batch's loss graph until the epoch ends
# Shape: the repo's own shape: the live loss dict still goes into the EMA() closure every batch, but the closure converts each value with float() before folding it into its running totals
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn.functional as F


def EMA(beta: float = 1):
    fix = defaultdict(float)
    total = defaultdict(float)

    def _update(metrics: dict, weight: float = 1) -> dict:
        for key, value in metrics.items():
            total[key] = total[key] * beta + weight * float(value)
            fix[key] = fix[key] * beta + weight
        return {key: tot / fix[key] for key, tot in total.items()}

    return _update


class Solver:
    def __init__(self, model, optimizer, loaders, sources, weights, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.loaders = loaders
        self.sources = sources
        self.weights = weights
        self.device = device

    def _run_one_epoch(self, epoch, train=True):
        loader = self.loaders["train" if train else "valid"]
        averager = EMA()
        losses = {}
        for idx, sources in enumerate(loader):
            sources = sources.to(self.device)
            mix = sources.sum(dim=1)
            estimate = self.model(mix)
            dims = tuple(range(2, sources.dim()))
            reco = F.l1_loss(estimate, sources, reduction="none").mean(dims).mean(0)
            weights = torch.tensor(self.weights).to(sources)
            loss = (reco * weights).sum() / weights.sum()
            losses = {"reco": loss, "loss": loss}
            for k, source in enumerate(self.sources):
                losses[f"reco_{source}"] = reco[k]
            if train:
                loss.backward()
                grad_norm = 0
                for p in self.model.parameters():
                    if p.grad is not None:
                        grad_norm += p.grad.data.norm() ** 2
                losses["grad"] = grad_norm ** 0.5
                self.optimizer.step()
                self.optimizer.zero_grad()
            losses = averager(losses)
            if idx % 50 == 0:
                print(f"{'Train' if train else 'Valid'} | epoch {epoch + 1} | {idx}: loss {float(losses['loss']):.4f}")
        return losses

    def train(self, epochs):
        history = []
        for epoch in range(epochs):
            self.model.train()
            train_metrics = self._run_one_epoch(epoch, train=True)
            self.model.eval()
            with torch.no_grad():
                valid_metrics = self._run_one_epoch(epoch, train=False)
            history.append({"train": float(train_metrics["loss"]), "valid": float(valid_metrics["loss"])})
        return history
