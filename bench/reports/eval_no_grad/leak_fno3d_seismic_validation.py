# Source: https://github.com/lehmannfa/HEMEW3D/blob/main/models/train_fno3d.py
# Report: realistic one-edit mistake on a correct 3D FNO seismic-surrogate training script: the `with torch.no_grad():` around the per-epoch validation loop is dropped
# Shape: after model.eval() the validation loop calls the 3D FNO with no backward and no grad-disabled context, so each validation batch saves all spectral-layer activations of a 32x32x32x320 output; losses are still .item()-reduced, so the cost is a higher peak per batch
# Expect: TML003 line 81
import timeit

import numpy as np
import torch
from torch.nn import L1Loss, MSELoss


def loss_criterion(a, b, weights, eps=0.01, relative=True):
    """Weighted L1 + L2 over the (E, N, Z) components, optionally relative to |target|."""
    total_l1, total_l2 = 0.0, 0.0
    for ai, bi in zip(a, b):
        base = torch.abs(bi) + eps if relative else 1.0
        total_l1 = total_l1 + L1Loss()(ai / base, bi / base)
        total_l2 = total_l2 + MSELoss()(ai / base, bi / base)
    return weights[0] * total_l1 + weights[1] * total_l2


class RunningAverage:
    def __init__(self):
        self.count = 0
        self.sum = 0
        self.avg = 0

    def update(self, value, n=1):
        self.count += n
        self.sum += value * n
        self.avg = self.sum / self.count


class EarlyStopper:
    def __init__(self, patience=1, min_delta=0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.counter = 0
        self.best = np.inf

    def early_stop(self, value):
        if value < self.best:
            self.best, self.counter = value, 0
        elif value > self.best + self.min_delta:
            self.counter += 1
            return self.counter >= self.patience
        return False


def run_training(model, train_loader, val_loader, device, epochs=200, lr=6e-4, loss_weights=(1.0, 0.0)):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, "min", factor=0.5, patience=10)
    early_stopper = EarlyStopper(patience=60, min_delta=1e-4)
    train_history = {"loss_relative": [], "loss_absolute": []}
    val_history = {"loss_relative": [], "loss_absolute": []}
    best_loss = np.inf

    for ep in range(epochs):
        t1 = timeit.default_timer()
        model.train()
        train_rel, train_abs = RunningAverage(), RunningAverage()
        for batch in train_loader:
            a, uE, uN, uZ = (t.to(device) for t in batch[:4])
            outE, outN, outZ = model(a)
            loss_rel = loss_criterion((outE, outN, outZ), (uE, uN, uZ), loss_weights, relative=True)
            loss_abs = loss_criterion((outE, outN, outZ), (uE, uN, uZ), loss_weights, relative=False)
            train_rel.update(loss_rel.item(), a.size(0))
            train_abs.update(loss_abs.item(), a.size(0))
            optimizer.zero_grad()
            loss_rel.backward()
            optimizer.step()
        train_history["loss_relative"].append(train_rel.avg)
        train_history["loss_absolute"].append(train_abs.avg)

        # validation
        model.eval()
        val_rel, val_abs = RunningAverage(), RunningAverage()
        for batch in val_loader:
            a, uE, uN, uZ = (t.to(device) for t in batch[:4])
            outE, outN, outZ = model(a)  # expect: TML003
            loss_rel_val = loss_criterion((outE, outN, outZ), (uE, uN, uZ), loss_weights, relative=True)
            loss_abs_val = loss_criterion((outE, outN, outZ), (uE, uN, uZ), loss_weights, relative=False)
            val_rel.update(loss_rel_val.item(), a.size(0))
            val_abs.update(loss_abs_val.item(), a.size(0))
        val_history["loss_relative"].append(val_rel.avg)
        val_history["loss_absolute"].append(val_abs.avg)
        scheduler.step(val_rel.avg)

        print(f"Epoch {ep + 1}/{epochs}: {timeit.default_timer() - t1:.2f}s - "
              f"train {train_rel.avg:.5f} - val {val_rel.avg:.5f}")
        if val_rel.avg < best_loss:
            best_loss = val_rel.avg
            torch.save(model.state_dict(), "bestmodel-fno3d.pt")
        if early_stopper.early_stop(val_rel.avg):
            break
    return train_history, val_history
