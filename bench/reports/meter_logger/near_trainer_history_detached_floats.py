# Source: https://github.com/pnnl/neuromancer/pull/292
# Report: the fix detaches the metrics before the trainer stores them.
# Shape: same step method returning graph-carrying metrics; the history keeps value.item().
# Expect: near-miss: must be silent
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
        return {name: value.item() for name, value in metrics.items()}

    def fit(self, loader, epochs=100):
        for epoch in range(epochs):
            for batch in loader:
                metrics = self.step(batch)
                for name, value in metrics.items():
                    self.history[name].append(value)
