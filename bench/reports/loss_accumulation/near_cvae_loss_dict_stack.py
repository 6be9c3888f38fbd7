# Source: https://github.com/Galaxies99/VAE-pytorch/blob/dfb6ace1a47246fed812a686bf937e4990ac46b1/run.py
# Report: same VAE/CVAE trainer with the fix: both epoch functions keep Python floats (loss.item()) instead of the loss tensors, so neither the train graph's scalars nor the eval losses stay on the GPU
# Shape: model.loss still returns a dict of tensors; the lists now hold floats, component losses are logged through a dict comprehension of .item() values, and the mean is a plain sum / len
# Expect: near-miss: must be silent
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("cvae")


class ConditionalVAE(nn.Module):
    def __init__(self, in_dim=784, n_classes=10, latent=20, hidden=400):
        super().__init__()
        self.n_classes = n_classes
        self.enc = nn.Sequential(nn.Linear(in_dim + n_classes, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent + n_classes, hidden), nn.ReLU(),
                                 nn.Linear(hidden, in_dim), nn.Sigmoid())

    def forward(self, x, labels):
        y = F.one_hot(labels, self.n_classes).float()
        h = self.enc(torch.cat([x.flatten(1), y], dim=1))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.dec(torch.cat([z, y], dim=1)), x, mu, logvar

    def loss(self, recon, x, mu, logvar, kl_weight=1.0):
        rec = F.binary_cross_entropy(recon, x.flatten(1), reduction="sum") / x.size(0)
        kld = -0.5 * torch.mean(torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1))
        return {"loss": rec + kl_weight * kld, "recon": rec, "kld": kld}


def train_one_epoch(model, loader, optimizer, epoch, device, n_train):
    model.train()
    losses = []
    for x, labels in loader:
        x, labels = x.to(device), labels.to(device)
        optimizer.zero_grad()
        out = model(x, labels)
        loss_dict = model.loss(*out, kl_weight=loader.batch_size / n_train)
        loss = loss_dict["loss"]
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        parts = {k: v.item() for k, v in loss_dict.items()}
    mean_loss = sum(losses) / max(len(losses), 1)
    logger.info("epoch %d  last batch %s", epoch + 1, parts)
    logger.info("epoch %d  train loss %.6f", epoch + 1, mean_loss)


def eval_one_epoch(model, loader, epoch, device, n_val):
    model.eval()
    losses = []
    for x, labels in loader:
        x, labels = x.to(device), labels.to(device)
        with torch.no_grad():
            out = model(x, labels)
            loss = model.loss(*out, kl_weight=loader.batch_size / n_val)["loss"]
        losses.append(loss.item())
    mean_loss = sum(losses) / max(len(losses), 1)
    logger.info("epoch %d  eval loss %.6f", epoch + 1, mean_loss)
    return mean_loss


def main(train_loader, val_loader, epochs=50, device="cuda"):
    model = ConditionalVAE().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = float("inf")
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, epoch, device, len(train_loader.dataset))
        val_loss = eval_one_epoch(model, val_loader, epoch, device, len(val_loader.dataset))
        if val_loss < best:
            best = val_loss
            torch.save(model.state_dict(), "cvae_best.pt")
