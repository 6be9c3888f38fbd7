# Source: https://github.com/Danielczl315/GANs/blob/9438761ffd04ab243aa5e97523c46293dddcf42c/MSEGAN.py
# Report: audit of a GAN trainer class: train_D/train_G call backward and step, then return the loss tensor itself; train() sums the returns with d_error += self.train_D(img) and g_error += self.train_G(img) over the whole epoch before float() at epoch end
# Shape: the per-step methods call .item() before returning, so the epoch loop adds plain Python floats into d_error/g_error; the float() at epoch end is then a no-op
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn
from torchvision.utils import make_grid


class MSEGAN:
    def __init__(self, G, D, g_optim, d_optim, device="cuda", z_dim=128):
        self.G, self.D = G.to(device), D.to(device)
        self.g_optim, self.d_optim = g_optim, d_optim
        self.device = device
        self.z_dim = z_dim
        self.bce = nn.BCELoss()
        self.mse = nn.MSELoss()
        self.images, self.g_losses, self.d_losses = [], [], []

    def _noise(self, n):
        return torch.randn(n, self.z_dim, device=self.device)

    def train_G(self, real_images):
        self.g_optim.zero_grad()
        fake = self.G(self._noise(real_images.size(0)))
        # pull generated samples toward the real batch in pixel space
        loss = self.mse(fake, real_images)
        loss.backward()
        self.g_optim.step()
        return loss.item()

    def train_D(self, real_images):
        self.d_optim.zero_grad()
        n = real_images.size(0)
        fake = self.G(self._noise(n)).detach()
        real_pred = self.D(real_images).view(-1)
        fake_pred = self.D(fake).view(-1)
        real_loss = self.bce(real_pred, torch.ones(n, device=self.device))
        fake_loss = self.bce(fake_pred, torch.zeros(n, device=self.device))
        loss = real_loss + fake_loss
        loss.backward()
        self.d_optim.step()
        return loss.item()

    @torch.no_grad()
    def snapshot(self, noise):
        self.G.eval()
        grid = make_grid(self.G(noise).cpu(), normalize=True)
        self.G.train()
        return grid

    def train(self, data_loader, num_epochs):
        self.G.train()
        self.D.train()
        fixed_noise = self._noise(64)
        for epoch in range(num_epochs):
            start = time.time()
            g_error, d_error = 0.0, 0.0
            for i, (img, _) in enumerate(data_loader):
                img = img.to(self.device)
                d_error += self.train_D(img)
                g_error += self.train_G(img)
            n_batches = i + 1
            self.images.append(self.snapshot(fixed_noise))
            self.g_losses.append(float(g_error) / n_batches)
            self.d_losses.append(float(d_error) / n_batches)
            print(f"epoch {epoch + 1}/{num_epochs} g_loss {self.g_losses[-1]:.3f} "
                  f"d_loss {self.d_losses[-1]:.3f} ({time.time() - start:.1f}s)")
        return self.g_losses, self.d_losses
