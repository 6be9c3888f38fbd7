# Source: https://github.com/sid-betalol/al-prop-pred/blob/0d0b910be3a2e224f448ddecd515ef7cb187071b/src/v2_active_learning.py
# Report: audit of a QM9 active-learning loop (PaiNN regressor, molecular property prediction): the acquisition functions score the whole unlabeled pool every AL round and keep every batch's prediction / expected-improvement tensor on the GPU (MC-dropout keeps num_samples copies of the pool), concatenating them only after the loops
# Shape: mc_dropout_std runs the pool num_samples times in train mode under no_grad, appending device predictions to preds and each pass's torch.cat to predictions; expected_improvement appends device EI tensors; active_learning_loop trains, scores the pool, argsorts and moves the top-k indices to the labeled set
# Expect: TML004 line 24; TML004 line 25; TML004 line 38
import random

import numpy as np
import torch
from torch.utils.data import Subset
from torch_geometric.loader import DataLoader

from utils import test, train


def mc_dropout_std(model, loader, device, num_samples=10):
    model.train()  # keep dropout active
    predictions = []
    for _ in range(num_samples):
        preds = []
        for data in loader:
            data = data.to(device)
            with torch.no_grad():
                pred = model(data.z, data.pos, data.batch)
            preds.append(pred)  # expect: TML004
        predictions.append(torch.cat(preds))  # expect: TML004
    return torch.stack(predictions).std(dim=0)


def expected_improvement(model, loader, device, best_f, sigma=0.1):
    model.eval()
    eis = []
    for data in loader:
        data = data.to(device)
        with torch.no_grad():
            pred = model(data.z, data.pos, data.batch)
        z = (best_f - pred) / sigma
        ei = (best_f - pred) * (0.5 + 0.5 * torch.erf(z / 2 ** 0.5)) + sigma * torch.exp(-0.5 * z ** 2) / (2 * np.pi) ** 0.5
        eis.append(ei)  # expect: TML004
    return torch.cat(eis)


def acquire(model, pool, args, device, best_val_mae):
    loader = DataLoader(pool, batch_size=args.batch_size)
    if args.acquisition == "uncertainty":
        scores = mc_dropout_std(model, loader, device)
    elif args.acquisition == "ei":
        scores = expected_improvement(model, loader, device, best_val_mae)
    else:
        return random.sample(range(len(pool)), args.points_per_iter)
    return scores.argsort(descending=True)[: args.points_per_iter].tolist()


def active_learning_loop(model, dataset, val_indices, labeled, unlabeled, args, device):
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=5)
    val_loader = DataLoader(Subset(dataset, val_indices), batch_size=args.batch_size)
    best_val_mae = float("inf")
    for al_iteration in range(args.al_iterations):
        train_loader = DataLoader(Subset(dataset, sorted(labeled)), batch_size=args.batch_size, shuffle=True)
        for epoch in range(args.epochs):
            train_loss = train(model, train_loader, optimizer, device)
            val_mae = test(model, val_loader, device)
            scheduler.step(val_mae)
            print(f"AL {al_iteration + 1} epoch {epoch:03d} loss {train_loss:.4f} val MAE {val_mae:.4f}")
        best_val_mae = min(val_mae, best_val_mae)
        pool_ids = sorted(unlabeled)
        picked = [pool_ids[i] for i in acquire(model, Subset(dataset, pool_ids), args, device, best_val_mae)]
        labeled.update(picked)
        unlabeled.difference_update(picked)
    return model, best_val_mae
