# Source: https://github.com/jonasvj/active-learning/blob/main/src/inference/swag.py
# Report: SWAG posterior fitted inside an active-learning loop, with a small search over SWAG learning rates (one full SWAG fit per candidate lr); each epoch updates running moments and can save the parameter iterate
# Shape: one edit from the repository: the iterate is saved as parameters_to_vector(model.parameters()) without .detach().tolist(), a graph-attached full-size GPU vector appended to self.iterates every epoch of every lr trial
# Expect: TML001 line 57
import copy

import torch
import torch.nn as nn
from torch.nn.utils import parameters_to_vector


class SWAGPosterior:
    def __init__(self, model, K=20, device="cuda"):
        self.model = model.to(device)
        self.K = K
        self.device = device

    def init_swag(self):
        self.mean = copy.deepcopy(self.model)
        self.sq_mean = copy.deepcopy(self.model)
        self.devs = nn.ModuleList([copy.deepcopy(self.model) for _ in range(self.K)])
        for p in self.sq_mean.parameters():
            p.detach().copy_(p.detach() ** 2)
        self.n_averaged = 1
        self.iterates = []

    def update_params(self, model):
        dev_idx = (self.n_averaged - 1) % self.K
        groups = zip(self.mean.parameters(), self.sq_mean.parameters(),
                     self.devs[dev_idx].parameters(), model.parameters())
        n = self.n_averaged
        for p_mean, p_sq, p_dev, p_model in groups:
            w = p_model.detach()
            p_mean.detach().copy_((n * p_mean.detach() + w) / (n + 1))
            p_sq.detach().copy_((n * p_sq.detach() + w ** 2) / (n + 1))
            p_dev.detach().copy_(w - p_mean.detach())
        self.n_averaged += 1

    def fit_swag(self, loader, epochs=50, lr=1e-3, save_iterates=True):
        self.init_swag()
        epoch_losses = []
        model = copy.deepcopy(self.model)
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for epoch in range(epochs):
            running = 0.0
            for x, y in loader:
                x, y = x.to(self.device), y.to(self.device)
                loss = nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                running += loss.detach().item()
            epoch_losses.append(running / len(loader.dataset))
            self.update_params(model)
            if save_iterates:
                self.iterates.append(parameters_to_vector(model.parameters()))  # expect: TML001
        return {"swag_losses": epoch_losses, "iterates": self.iterates}

    @torch.no_grad()
    def val_accuracy(self, loader):
        self.mean.eval()
        correct, total = 0, 0
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            correct += (self.mean(x).argmax(1) == y).sum().item()
            total += y.numel()
        return correct / total

    def fit_swag_and_lr(self, train_loader, val_loader, lrs=(1e-3, 1e-2, 5e-2), epochs=50):
        best_acc, best_lr = -float("inf"), None
        results = {}
        for lr in lrs:
            self.fit_swag(train_loader, epochs=epochs, lr=lr)
            acc = self.val_accuracy(val_loader)
            results[lr] = acc
            if acc > best_acc:
                best_acc, best_lr = acc, lr
        stats = self.fit_swag(train_loader, epochs=epochs, lr=best_lr)
        stats["val_by_lr"] = results
        stats["best_lr"] = best_lr
        return stats
