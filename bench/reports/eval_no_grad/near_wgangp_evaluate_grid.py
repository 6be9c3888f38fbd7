# Source: https://github.com/Zeleni9/pytorch-wgan/blob/7f5b52d638746c8b2abdd65dc26319f1de3be8cf/models/wgan_gradient_penalty.py
# Report: audit of the WGAN-GP class: evaluate() loads the G/D checkpoints, calls G.eval()/D.eval() and samples an 8x8 grid with grad enabled; the fix samples inside torch.no_grad()
# Shape: same class; the evaluate() sampling runs under torch.no_grad(), while the gradient penalty keeps its autograd.grad(create_graph=True, retain_graph=True) in training
# Expect: near-miss: must be silent
import os

import torch
from torch import autograd
from torchvision import utils


class WGAN_GP:
    def __init__(self, G, D, batch_size=64, lambda_term=10, device="cuda"):
        self.G, self.D = G.to(device), D.to(device)
        self.batch_size = batch_size
        self.lambda_term = lambda_term
        self.device = device
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), lr=1e-4, betas=(0.5, 0.999))

    def noise(self, n):
        return torch.randn(n, 100, 1, 1, device=self.device)

    def gradient_penalty(self, real, fake):
        eta = torch.rand(real.size(0), 1, 1, 1, device=self.device).expand_as(real)
        inter = (eta * real + (1 - eta) * fake).requires_grad_(True)
        scores = self.D(inter)
        grads = autograd.grad(scores, inter, torch.ones_like(scores), create_graph=True, retain_graph=True)[0]
        return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean() * self.lambda_term

    def train_step(self, images, critic_iters, batches):
        for p in self.D.parameters():
            p.requires_grad = True
        for _ in range(critic_iters):
            self.D.zero_grad()
            images = next(batches).to(self.device)
            d_real = self.D(images).mean()
            fake = self.G(self.noise(images.size(0)))
            d_fake = self.D(fake.detach()).mean()
            d_loss = d_fake - d_real + self.gradient_penalty(images, fake.detach())
            d_loss.backward()
            self.d_optimizer.step()
        for p in self.D.parameters():
            p.requires_grad = False
        self.G.zero_grad()
        g_loss = -self.D(self.G(self.noise(self.batch_size))).mean()
        g_loss.backward()
        self.g_optimizer.step()
        return {"loss_d": d_loss.item(), "loss_g": g_loss.item(), "wasserstein": (d_real - d_fake).item()}

    def load_model(self, d_path, g_path):
        self.D.load_state_dict(torch.load(d_path, map_location=self.device))
        self.G.load_state_dict(torch.load(g_path, map_location=self.device))

    def evaluate(self, d_path, g_path, out_dir="."):
        self.load_model(d_path, g_path)
        self.G.eval()
        self.D.eval()
        with torch.no_grad():
            samples = self.G(self.noise(self.batch_size))
        samples = samples.mul(0.5).add(0.5).cpu()
        grid = utils.make_grid(samples)
        utils.save_image(grid, os.path.join(out_dir, "dgan_model_image.png"))
        print("Grid of 8x8 images saved to 'dgan_model_image.png'.")
        return grid
