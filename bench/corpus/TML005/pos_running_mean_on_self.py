# Modelled on: https://github.com/pytorch/pytorch/issues/20275
# Report: a custom batch-norm layer updated its running_mean from the batch statistics with autograd on; "you keep extending the graph" (~7 MB/s growth).
import torch
import torch.nn as nn


class FeatureNormalizer(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.momentum = momentum
        self.running_mean = torch.zeros(dim)

    def forward(self, x):
        h = self.proj(x)
        batch_mean = h.mean(dim=0)
        self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * batch_mean  # expect: TML005, TML019
        return h - self.running_mean
