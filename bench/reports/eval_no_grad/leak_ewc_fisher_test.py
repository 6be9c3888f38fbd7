# Source: https://github.com/moskomule/ewc.pytorch/blob/c846fc6c7929963df241c402e2f3998f7f22b975/utils.py
# Report: audit: test() puts the model in eval mode and runs every test batch through it with autograd on (no no_grad), so each batch saves activations for a backward that never comes
# Shape: an EWC helper estimates the Fisher diagonal (eval mode plus backward, which is fine) and a separate accuracy helper forwards the test loader after model.eval() with grad enabled
# Expect: TML003 line 68
from copy import deepcopy

import torch
import torch.nn.functional as F
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class ElasticWeightConsolidation:
    """Quadratic penalty that anchors parameters important for an old task."""

    def __init__(self, model: nn.Module, old_samples):
        self.model = model
        self.old_samples = old_samples
        self.params = {n: p for n, p in model.named_parameters() if p.requires_grad}
        self.anchors = {n: p.detach().clone() for n, p in self.params.items()}
        self.fisher = self._diagonal_fisher()

    def _diagonal_fisher(self):
        fisher = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.model.eval()
        for sample in self.old_samples:
            self.model.zero_grad()
            logits = self.model(sample.unsqueeze(0).to(device))
            pseudo_label = logits.argmax(dim=1)
            nll = F.nll_loss(F.log_softmax(logits, dim=1), pseudo_label)
            nll.backward()
            for n, p in self.model.named_parameters():
                fisher[n].data += p.grad.data.pow(2) / len(self.old_samples)
        return fisher

    def penalty(self, model: nn.Module):
        total = 0.0
        for n, p in model.named_parameters():
            total = total + (self.fisher[n] * (p - self.anchors[n]).pow(2)).sum()
        return total


def fit_task(model, optimizer, loader, ewc=None, importance=1000.0):
    model.train()
    running = 0.0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        if ewc is not None:
            loss = loss + importance * ewc.penalty(model)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / max(len(loader), 1)


def snapshot(model):
    return deepcopy(model.state_dict())


def accuracy(model: nn.Module, loader):
    model.eval()
    hits = 0
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        scores = model(inputs)  # expect: TML003
        hits += (scores.argmax(dim=1) == targets).sum().item()
    return hits / len(loader.dataset)


def run_sequence(model, tasks, epochs=5, importance=1000.0):
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    ewc, history = None, []
    for t, (train_loader, test_loaders, replay) in enumerate(tasks):
        for _ in range(epochs):
            fit_task(model, optimizer, train_loader, ewc, importance)
        history.append([accuracy(model, tl) for tl in test_loaders[: t + 1]])
        ewc = ElasticWeightConsolidation(model, replay)
    return history, snapshot(model)
