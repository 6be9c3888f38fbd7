# Source: https://github.com/haodongzhang0118/sc-DMAE/blob/461df0ecec6f8a3a1ae2e88f357f5a746b049de2/util.py
# Report: audit of the single-cell masked autoencoder: compute_loss returns a dict of graph-attached terms and train() hands the whole dict to AverageMeter.update, whose body takes .detach().cpu().numpy() of every entry before summing, so nothing attached is kept (correct code)
# Shape: a per-epoch meter receives the loss dict; its update() detaches and copies each component to host before the running sums on self
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class LossDictMeter:
    """Running averages of every component of the autoencoder's loss dict."""

    KEYS = ("total_loss", "recon_loss", "mask_loss", "latent_loss")

    def __init__(self):
        self.count = 0
        self.sums = {k: 0.0 for k in self.KEYS}

    def update(self, losses, n=1):
        for k in self.KEYS:
            value = losses[k].detach().cpu().numpy()
            self.sums[k] += value * n
        self.count += n

    def avg(self, key):
        return float(self.sums[key]) / max(self.count, 1)


class MaskedGeneAutoencoder(nn.Module):
    def __init__(self, num_genes, hidden=256, latent=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(num_genes, hidden), nn.ReLU(), nn.Linear(hidden, latent))
        self.decoder = nn.Linear(latent, num_genes)
        self.mask_head = nn.Linear(latent, num_genes)
        self.log_vars = nn.Parameter(torch.zeros(3))

    def compute_loss(self, x_corrupt, x, mask):
        z = self.encoder(x_corrupt)
        recon = F.mse_loss(self.decoder(z), x)
        mask_l = F.binary_cross_entropy_with_logits(self.mask_head(z), mask)
        latent_l = z.pow(2).mean()
        terms = torch.stack([recon, mask_l, latent_l])
        total = (torch.exp(-self.log_vars) * terms + self.log_vars).sum()
        return {"total_loss": total, "recon_loss": recon, "mask_loss": mask_l, "latent_loss": latent_l}


def corrupt(x, p=0.4):
    mask = (torch.rand_like(x) < p).float()
    shuffled = x[torch.randperm(x.size(0), device=x.device)]
    return x * (1 - mask) + shuffled * mask, mask


def train(model, loader, epochs=100, lr=1e-3, device="cuda"):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    log = []
    for epoch in range(epochs):
        model.train()
        meter = LossDictMeter()
        for x, _ in loader:
            x = x.to(device)
            x_corrupt, mask = corrupt(x)
            optimizer.zero_grad()
            losses = model.compute_loss(x_corrupt, x, mask)
            losses["total_loss"].backward()
            optimizer.step()
            meter.update(losses, n=x.size(0))
        log.append({k: meter.avg(k) for k in LossDictMeter.KEYS})
        print(f"epoch {epoch + 1}: total {log[-1]['total_loss']:.4f} recon {log[-1]['recon_loss']:.4f}")
    return log
