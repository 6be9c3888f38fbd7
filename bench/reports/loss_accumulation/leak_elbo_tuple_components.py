# Source: https://github.com/Liangym1225/VAE-Pytorch/blob/5e0255a189904d8af45cc68e8e95ba278eef0bba/train.py
# Report: audit of a MNIST VAE trainer whose ELBO module returns (total, rc.item(), kl.item()); this is the variant it avoided: the module returns the component tensors, so the loop's `+=` of the components (no .item() at the call site) sums graph-attached losses for the whole epoch
# Shape: same loss module and loop; ELBO.forward returns `rc + kl, rc, kl`, the total is still summed with .item() but train_loss_rc / train_loss_kl become tensors carrying every batch's graph until logged
# Expect: TML001 line 51; TML001 line 52
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
        return rc + kl, rc, kl


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
            train_loss_rc += loss_rc  # expect: TML001
            train_loss_kl += loss_kl  # expect: TML001
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
