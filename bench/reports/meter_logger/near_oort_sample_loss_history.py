# Source: https://github.com/TL-System/plato/blob/14dfc1adaf6c811afe8994cae298db7bc21a1610/examples/client_selection/oort/oort_trainer.py
# Report: near-miss from the Oort client trainer as written: the squared per-sample losses are moved off the graph with .cpu().detach().numpy() and summed with numpy before run_history records them
# Shape: same criterion method and RunHistory.update_metric store, but the value recorded is a numpy float computed from the detached CPU copy
# Expect: near-miss: must be silent
import math

import numpy as np
from collections import defaultdict

import torch
import torch.nn as nn


class RunHistory:
    def __init__(self):
        self._metrics = defaultdict(list)

    def update_metric(self, name, value):
        self._metrics[name].append(value)

    def values(self, name):
        return self._metrics[name]

    def reset(self):
        self._metrics = defaultdict(list)


class OortClientTrainer:
    """Local trainer whose statistical utility is reported to the Oort selector."""

    def __init__(self, model, device="cuda", lr=0.05):
        self.device = device
        self.model = model.to(device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
        self.run_history = RunHistory()
        self.samples_seen = 0

    def get_loss_criterion(self):
        return self.process_loss

    def process_loss(self, outputs, labels):
        per_sample = nn.functional.cross_entropy(outputs, labels, reduction="none")
        # the squared losses feed the client's statistical utility
        sq = np.power(per_sample.cpu().detach().numpy(), 2)
        self.run_history.update_metric("sq_loss_step", float(sq.sum()))
        return per_sample.mean()

    def train(self, loader, epochs=1):
        criterion = self.get_loss_criterion()
        self.run_history.reset()
        self.model.train()
        for _ in range(epochs):
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                self.optimizer.zero_grad()
                loss = criterion(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                self.samples_seen += y.size(0)
        return self.statistical_utility()

    def statistical_utility(self):
        sq = self.run_history.values("sq_loss_step")
        total = float(sum(sq))
        return self.samples_seen * math.sqrt(total / max(self.samples_seen, 1))


def select_clients(trainers, loaders, k=3):
    utilities = []
    for cid, (trainer, loader) in enumerate(zip(trainers, loaders)):
        utilities.append((trainer.train(loader), cid))
    utilities.sort(reverse=True)
    return [cid for _, cid in utilities[:k]]
