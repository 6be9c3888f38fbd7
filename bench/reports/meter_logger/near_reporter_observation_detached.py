# Source: https://github.com/pfnet/pytorch-pfn-extras/pull/49
# Report: the fix replaces the copy that keeps the graph with `detach()`; callers that report detached values never had the problem.
# Shape: same reporter with its per-key summaries; the training loop reports a detached loss.
# Expect: near-miss: must be silent
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
        reporter.report({"train/loss": loss.detach()})
    return reporter.compute()
