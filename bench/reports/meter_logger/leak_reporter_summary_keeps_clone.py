# Source: https://github.com/pfnet/pytorch-pfn-extras/pull/49
# Report: the reporter copied reported tensors with `clone()`, which keeps the computational graph; the summaries it accumulates then held every step's graph.
# Shape: a reporter object receives a dict of observations each step, clones each value and adds it to a per-key running summary kept on the reporter for the whole epoch.
# Expect: TML001 line 43
from collections import defaultdict

import torch
import torch.nn.functional as F


class Summary:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def add(self, value):
        self.total += value
        self.count += 1

    def mean(self):
        return self.total / max(self.count, 1)


class Reporter:
    def __init__(self):
        self.summaries = defaultdict(Summary)

    def report(self, observation):
        for key, value in observation.items():
            self.summaries[key].add(value.clone() if torch.is_tensor(value) else value)

    def compute(self):
        return {key: float(summary.mean()) for key, summary in self.summaries.items()}


def fit_epoch(model, optimizer, loader, reporter):
    for images, labels in loader:
        logits = model(images.cuda())
        loss = F.cross_entropy(logits, labels.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reporter.report({"train/loss": loss})  # expect: TML001
    return reporter.compute()
