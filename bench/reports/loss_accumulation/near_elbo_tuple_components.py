# Source: https://github.com/Liangym1225/VAE-Pytorch/blob/5e0255a189904d8af45cc68e8e95ba278eef0bba/train.py
# Report: audit of a MNIST VAE trainer (correct in a tricky way): the ELBO loss module returns (total, rc.item(), kl.item()), so the per-epoch sums of the reconstruction and KL components that the loop does without .item() are Python floats; only the total keeps the graph, and it is summed with .item()
# Shape: an nn.Module loss built from two sub-loss modules returns a 3-tuple; the loop unpacks it and sums the components into epoch totals logged to wandb-like run.log
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.optim import Adam


class ReconstructionLoss(nn.Module):
    def __init__(self, distribution="gaussian"):
        super().__init__()
        self.loss = nn.MSELoss(reduction="sum") if distribution == "gaussian" else nn.BCELoss(reduction="sum")

    def forward(self, output, target):
        return self.loss(output, target)


class KLDivergence(nn.Module):
    def forward(self, mu, logsig):
        return -0.5 * torch.sum(1 + logsig - mu.pow(2) - logsig.exp())


class ELBO(nn.Module):
    def __init__(self, distribution="gaussian"):
        super().__init__()
        self.reconstruction = ReconstructionLoss(distribution)
        self.kl_divergence = KLDivergence()

    def forward(self, mu, logsig, output, target):
        rc = self.reconstruction(output, target)
        kl = self.kl_divergence(mu, logsig)
        return rc + kl, rc.item(), kl.item()


def train(vae, loader, run, epochs=10, lr=1e-3, device="cuda"):
    optimizer = Adam(vae.parameters(), lr=lr)
    loss_fn = ELBO(distribution="gaussian")
    n_batches = len(loader)
    for epoch in range(1, epochs + 1):
        vae.train()
        train_loss, train_loss_rc, train_loss_kl = 0.0, 0.0, 0.0
        for x, _ in loader:
            x = x.to(device)
            z, mu, logsig, output = vae(x)
            loss, loss_rc, loss_kl = loss_fn(mu, logsig, output, x)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
            train_loss_rc += loss_rc
            train_loss_kl += loss_kl
        train_loss /= n_batches
        train_loss_rc /= n_batches
        train_loss_kl /= n_batches
        print(f"[TRAIN] epoch {epoch:3d} | loss {train_loss:.2f} | rec {train_loss_rc:.2f} | kl {train_loss_kl:.2f}")
        run.log({
            "train/loss": train_loss,
            "train/reconstruction": train_loss_rc,
            "train/kl": train_loss_kl,
            "epoch": epoch,
        })
    return vae
