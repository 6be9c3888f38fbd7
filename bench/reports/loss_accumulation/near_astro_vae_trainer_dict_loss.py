# Source: https://github.com/lnguyen258/AstroVAE/blob/3d913a9073e4edc218ec537b0aeb0cfa2fbcaa67/src/engine/vae_trainer.py
# Report: audit (correct code): the galaxy-image VAE trainer gets a dict from its loss helper whose 'Loss' entry is graph-attached (the other terms are detached inside the helper) and sums float(loss.item()) * batch size per epoch, so only Python floats outlive the step
# Shape: same Trainer and dict-returning vae_loss(); the running sum takes float(loss.item()) * bsz, and the component sums take float() of the helper's already-detached tensors
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


def vae_loss(recons, inputs, mu, log_var, kld_weight=0.00025):
    recons_loss = F.mse_loss(recons, inputs)
    kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0)
    loss = recons_loss + kld_weight * kld_loss
    return {"Loss": loss, "Reconstruction_Loss": recons_loss.detach(), "KLD": -kld_loss.detach()}


class GalaxyVAE(nn.Module):
    def __init__(self, latent_dim=64):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.LeakyReLU(), nn.Conv2d(32, 64, 4, 2, 1), nn.LeakyReLU(), nn.Flatten())
        self.fc_mu = nn.LazyLinear(latent_dim)
        self.fc_var = nn.LazyLinear(latent_dim)
        self.dec_in = nn.Linear(latent_dim, 64 * 16 * 16)
        self.dec = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.LeakyReLU(), nn.ConvTranspose2d(32, 3, 4, 2, 1), nn.Tanh())

    def forward(self, x):
        h = self.enc(x)
        mu, log_var = self.fc_mu(h), self.fc_var(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * log_var)
        return self.dec(self.dec_in(z).view(-1, 64, 16, 16)), x, mu, log_var


class Trainer:
    def __init__(self, model, train_dataset, batch_size=64, lr=1e-3, num_epochs=50, device="cuda"):
        self.device = device
        self.model = model.to(device)
        self.criterion = vae_loss
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.train_loader = DataLoader(train_dataset, batch_size=batch_size, shuffle=True, pin_memory=True)
        self.num_epochs = num_epochs
        self.history = {"epoch": [], "train_loss": [], "recon": [], "kld": []}

    def train(self):
        for epoch in range(self.num_epochs):
            self.model.train()
            running_loss_sum = 0.0
            recon_sum = 0.0
            kld_sum = 0.0
            running_count = 0
            for batch_idx, (X, _) in enumerate(self.train_loader):
                X = X.to(self.device, non_blocking=True)
                self.optimizer.zero_grad()
                outputs = self.model(X)
                loss_dict = self.criterion(*outputs)
                loss = loss_dict["Loss"]
                loss.backward()
                self.optimizer.step()
                bsz = X.size(0)
                running_loss_sum += float(loss.item()) * bsz
                recon_sum += float(loss_dict["Reconstruction_Loss"]) * bsz
                kld_sum += float(loss_dict["KLD"]) * bsz
                running_count += bsz
                if batch_idx % 25 == 0:
                    print(f"epoch {epoch + 1} step {batch_idx} avg loss {running_loss_sum / running_count:.4f}")
            self.history["epoch"].append(epoch + 1)
            self.history["train_loss"].append(running_loss_sum / max(running_count, 1))
            self.history["recon"].append(recon_sum / max(running_count, 1))
            self.history["kld"].append(kld_sum / max(running_count, 1))
        return self.history, self.model
