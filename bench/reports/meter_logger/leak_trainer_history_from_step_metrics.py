# Source: https://github.com/pnnl/neuromancer/pull/292
# Report: the Trainer stored the metric dicts of every step without detaching them, keeping hundreds of MB to GBs of autograd graph over a long run.
# Shape: a step method returns a dict of metrics (the loss among them); the trainer appends every value to self.history lists.
# Expect: TML001 line 40
from collections import defaultdict

import torch
import torch.nn as nn


class Problem(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, batch):
        pred = self.net(batch["x"])
        residual = pred - batch["y"]
        return {"loss": (residual ** 2).mean(), "max_error": residual.abs().max()}


class Trainer:
    def __init__(self, problem, optimizer):
        self.problem = problem
        self.optimizer = optimizer
        self.history = defaultdict(list)

    def step(self, batch):
        metrics = self.problem(batch)
        self.optimizer.zero_grad()
        metrics["loss"].backward()
        self.optimizer.step()
        return metrics

    def fit(self, loader, epochs=100):
        for epoch in range(epochs):
            for batch in loader:
                metrics = self.step(batch)
                for name, value in metrics.items():
                    self.history[name].append(value)  # expect: TML001
