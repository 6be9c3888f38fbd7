# Modelled on: https://github.com/bayesiains/nflows/pull/11
# Report: the fix for a batch-norm leak keeps the running-statistics update out of the graph; near-miss: running statistics updated under torch.no_grad(), as BatchNorm does internally, so no history chains between steps.
import torch
import torch.nn as nn


class FeatureNormalizer(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))

    def forward(self, x):
        h = self.proj(x)
        if self.training:
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * h.mean(dim=0))
        return h - self.running_mean
