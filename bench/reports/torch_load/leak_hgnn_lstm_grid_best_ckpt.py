# Source: https://github.com/lxk8998/HGNN-LSTM/blob/c6c2481ff3c0b0ae0aa52b8c1ad369b92d971565/utils/save_checkpoint.py
# Report: audit of a hydrology HGNN-LSTM grid search (lr x batch size, one model per run): load_checkpoint() restores the best model and optimizer with torch.load(path) and no map_location, so every tensor of the checkpoint comes back on the GPU it was saved from before load_state_dict copies it
# Shape: the rewrite keeps the save/load helper pair and the per-run driver that reloads the best checkpoint for testing; torch.load is called bare inside the helper
# Expect: TML011 line 24
import os
from itertools import product

import torch
import torch.nn as nn

DEVICE = torch.device("cuda:0")


def save_checkpoint(model, optimizer, path):
    torch.save(
        {"model_state_dict": model.state_dict(), "optimizer_state_dict": optimizer.state_dict()},
        path,
    )


def load_checkpoint(model, optimizer, path):
    if not os.path.isfile(path):
        return model, optimizer
    checkpoint = torch.load(path)  # expect: TML011
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model, optimizer


def run_epoch(model, loader, criterion, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, batches = 0.0, 0
    with torch.set_grad_enabled(training):
        for meteo, hydro, target in loader:
            meteo, hydro, target = meteo.to(DEVICE), hydro.to(DEVICE), target.to(DEVICE)
            loss = criterion(model(meteo, hydro), target)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item()
            batches += 1
    return total / max(batches, 1)


def grid_search(build_model, make_loaders, out_dir, epochs=300):
    results = {}
    for lr, bs in product([1e-2, 5e-3, 1e-3], [16, 32, 64, 128]):
        train_dl, val_dl, test_dl = make_loaders(bs)
        model = build_model().to(DEVICE)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        criterion = nn.MSELoss()
        best_path = os.path.join(out_dir, f"lr{lr}_bs{bs}_best.pt")
        best_val = float("inf")
        for epoch in range(epochs):
            run_epoch(model, train_dl, criterion, optimizer)
            val_loss = run_epoch(model, val_dl, criterion)
            if val_loss < best_val:
                best_val = val_loss
                save_checkpoint(model, optimizer, best_path)
        model, optimizer = load_checkpoint(model, optimizer, best_path)
        results[(lr, bs)] = run_epoch(model, test_dl, criterion)
    return results
