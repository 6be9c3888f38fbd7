# Source: https://github.com/pytorch/pytorch/issues/47175
# Report: a training loop resets gradients only at the start of each epoch instead of every iteration, so every optimizer.step() applies the sum of all gradients seen so far in the epoch
# Shape: same epoch function, but optimizer.zero_grad(set_to_none=True) now runs at the top of every batch, so each step sees only that batch's gradients
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class TabularNet(nn.Module):
    def __init__(self, n_features, n_classes, hidden=256):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(n_features, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
        )
        self.head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.head(self.body(x))


def train_one_epoch(model, loader, optimizer, device, clip=1.0):
    model.train()
    stats = {"loss": 0.0, "correct": 0, "seen": 0}
    for features, target in loader:
        features = features.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        # reset every iteration, not once per epoch
        optimizer.zero_grad(set_to_none=True)
        logits = model(features)
        loss = F.cross_entropy(logits, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        stats["loss"] += loss.item() * target.size(0)
        stats["correct"] += (logits.argmax(1) == target).sum().item()
        stats["seen"] += target.size(0)
    return {
        "loss": stats["loss"] / stats["seen"],
        "acc": stats["correct"] / stats["seen"],
    }


def fit(model, loader, epochs=20, lr=3e-4, device="cuda"):
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-2)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history = []
    for epoch in range(epochs):
        start = time.time()
        metrics = train_one_epoch(model, loader, optimizer, device)
        scheduler.step()
        metrics["epoch"] = epoch
        metrics["secs"] = time.time() - start
        history.append(metrics)
        print(f"epoch {epoch}: loss={metrics['loss']:.4f} acc={metrics['acc']:.3f}")
    return history
