# Source: https://github.com/shayneobrien/generative-models/blob/74fbe414f81eaed29274e273f1fb6128abdb0ff5/src/vae.py
# Report: audit: VAETrainer.evaluate() runs the VAE over the whole validation iterator after model.eval() with no torch.no_grad(), so every batch builds and holds an autograd graph it never uses
# Shape: a trainer class whose per-epoch validation helper calls self.model on every val batch with grad enabled; only .item() values leave the loop (peak, not growth)
# Expect: TML003 line 62
from copy import deepcopy

import numpy as np
import torch
import torch.nn.functional as F


class VAETrainer:
    def __init__(self, model, train_iter, val_iter, device="cuda"):
        self.model = model.to(device)
        self.train_iter = train_iter
        self.val_iter = val_iter
        self.device = device
        self.best_val_loss = float("inf")
        self.best_model = None
        self.history = {"recon": [], "kl": [], "val": []}

    def flatten(self, images):
        return images.view(images.size(0), -1).to(self.device)

    @staticmethod
    def batch_terms(images, outputs, mu, log_var):
        recon = F.mse_loss(outputs, images, reduction="sum")
        kl = 0.5 * torch.sum(mu.pow(2) + log_var.exp() - log_var - 1)
        return recon, kl

    def train(self, num_epochs, lr=1e-3, weight_decay=1e-5):
        params = [p for p in self.model.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
        for epoch in range(1, num_epochs + 1):
            self.model.train()
            epoch_recon, epoch_kl = [], []
            for images, _ in self.train_iter:
                images = self.flatten(images)
                optimizer.zero_grad()
                outputs, mu, log_var = self.model(images)
                recon, kl = self.batch_terms(images, outputs, mu, log_var)
                (recon + kl).backward()
                optimizer.step()
                epoch_recon.append(recon.item())
                epoch_kl.append(kl.item())
            self.history["recon"].extend(epoch_recon)
            self.history["kl"].extend(epoch_kl)

            self.model.eval()
            val_loss = self.evaluate(self.val_iter)
            self.history["val"].append(val_loss)
            if val_loss < self.best_val_loss:
                self.best_val_loss = val_loss
                self.best_model = deepcopy(self.model)
            print(f"epoch {epoch}: recon {np.mean(epoch_recon):.3f} "
                  f"kl {np.mean(epoch_kl):.4f} val {val_loss:.3f}")

    def evaluate(self, iterator):
        losses = []
        for images, _ in iterator:
            images = self.flatten(images)
            outputs, mu, log_var = self.model(images)  # expect: TML003
            recon, kl = self.batch_terms(images, outputs, mu, log_var)
            losses.append((recon + kl).item())
        return float(np.mean(losses))

    def sample_images(self, n=16):
        self.model.eval()
        with torch.no_grad():
            z = torch.randn(n, self.model.z_dim, device=self.device)
            images = self.model.decoder(z).view(n, 1, 28, 28).cpu()
        self.model.train()
        return images
