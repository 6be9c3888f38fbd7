# Source: https://github.com/lukinio/interval_net/blob/9d025e31fee74a007773713f5174378c953d6d0b/attacks.py
# Report: audit of an interval-bound network's PGD helper: delta stays a leaf that requires grad, each projected step is written through delta.data, and the helper returns delta.detach(), so no PGD step links to the previous one and the training loss sees a constant perturbation
# Shape: same pgd() helper and adversarial train_epoch(); the update reads delta on the right-hand side but assigns into delta.data (no graph is recorded), and the result is detached before it is returned
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class IntervalMLP(nn.Module):
    """Propagates a centre and a radius (stacked on dim 1) through two layers."""

    def __init__(self, in_dim=784, hidden=256, n_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)

    def _interval(self, layer, mid, rad):
        return layer(mid), F.linear(rad, layer.weight.abs())

    def forward(self, x):
        lo, hi = x.flatten(2).unbind(1)
        mid, rad = (lo + hi) / 2, (hi - lo) / 2
        mid, rad = self._interval(self.fc1, mid, rad)
        lower, upper = F.relu(mid - rad), F.relu(mid + rad)
        mid, rad = self._interval(self.fc2, (lower + upper) / 2, (upper - lower) / 2)
        return mid, rad


def stacked(X, delta):
    return torch.stack([X + delta, X + delta], dim=1)


def pgd(model, X, y, loss_fn, epsilon=8 / 255, alpha=2 / 255, num_iter=10):
    delta = torch.zeros_like(X, requires_grad=True)
    for _ in range(num_iter):
        logits, _ = model(stacked(X, delta))
        loss = loss_fn(logits, y)
        grad, = torch.autograd.grad(loss, delta)
        # take the signed step, project to the eps-ball and keep X + delta in [0, 1]
        delta.data = torch.min(torch.max((delta + alpha * grad.sign()).clamp(-epsilon, epsilon), -X), 1 - X)
    return delta.detach()


def train_epoch(model, loader, optimizer, device="cuda", epsilon=8 / 255):
    model.train()
    stats = {"loss": 0.0, "correct": 0, "seen": 0}
    for X, y in loader:
        X, y = X.to(device), y.to(device)
        delta = pgd(model, X, y, F.cross_entropy, epsilon=epsilon)
        logits, radius = model(stacked(X, delta))
        loss = F.cross_entropy(logits, y) + 0.01 * radius.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        stats["loss"] += loss.item() * X.size(0)
        stats["correct"] += (logits.argmax(1) == y).sum().item()
        stats["seen"] += X.size(0)
    return {"loss": stats["loss"] / stats["seen"], "acc": stats["correct"] / stats["seen"]}
