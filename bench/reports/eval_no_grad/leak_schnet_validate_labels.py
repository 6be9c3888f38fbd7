# Source: https://github.com/DevinTDHa/PML-SchNet/blob/091b06309a74d9907e3e395c3b385bbbcf5584a3/pml_schnet/training.py
# Report: SchNet (molecular energy) trainer validates every epoch with validate_schnet(), which runs the model without no_grad and keeps each prediction in `labels` (the .item() version is commented out)
# Shape: model(X_batch) in a validate function builds a graph per test batch; labels.append(pred) keeps every prediction with its graph alive until the function returns
# Expect: TML003 line 40; TML001 line 42
import os

import numpy as np
import torch
from torch import nn


class SchNetLike(nn.Module):
    def __init__(self, n_atom_types=10, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(n_atom_types, hidden)
        self.dist = nn.Linear(1, hidden)
        self.out = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, batch):
        z, r = batch["Z"], batch["R"]
        d = torch.cdist(r, r).unsqueeze(-1)
        h = self.embed(z) + (self.dist(d) * self.embed(z).unsqueeze(1)).sum(dim=2)
        return self.out(h).sum(dim=(1, 2))


def load_data(batches, n_train, n_test):
    # batches: list of (X_batch dict, y_batch) already collated
    return batches[:n_train], batches[n_train:n_train + n_test]


def to_device(X_batch, y_batch, device):
    return {k: v.to(device) for k, v in X_batch.items()}, y_batch.to(device)


def validate_schnet(model, test_gen, criterion, device):
    val_loss = []
    labels = []
    for X_batch, y_batch in test_gen:
        X_batch, y_batch = to_device(X_batch, y_batch, device)
        pred = model(X_batch)  # expect: TML003
        loss = criterion(pred, y_batch)
        labels.append(pred)  # expect: TML001
        val_loss.append(loss.item())
    return np.mean(val_loss), labels


def train_schnet_energy(model, writer, n_train, n_test, lr, epochs, dataset, device="cuda"):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.L1Loss()
    losses = []
    for epoch in range(epochs):
        train_gen, test_gen = load_data(dataset, n_train, n_test)
        loss = None
        for X_batch, y_batch in train_gen:
            X_batch, y_batch = to_device(X_batch, y_batch, device)
            pred = model(X_batch)
            loss = criterion(pred, y_batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
        writer.add_scalar("Loss", loss.item(), epoch)
        writer.add_scalar("Validation", validate_schnet(model, test_gen, criterion, device)[0], epoch)
        torch.save(
            {"epoch": epoch, "model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()},
            os.path.join(writer.log_dir, f"model_epoch_{epoch}.ckpt"),
        )
    return losses[-1]
