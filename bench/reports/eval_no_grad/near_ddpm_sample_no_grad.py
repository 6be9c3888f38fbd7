# Source: https://github.com/dome272/Diffusion-Models-pytorch/blob/main/ddpm.py
# Report: the DDPM re-implementation draws a grid of samples at the end of every epoch; Diffusion.sample runs the 1000-step reverse chain inside torch.no_grad() between model.eval() and model.train()
# Shape: x = f(x, model(x, t)) is carried across 999 denoising steps, but under no_grad neither x nor predicted_noise records a graph
# Expect: near-miss: must be silent
import os
import torch
import torch.nn as nn
from torch import optim
from torchvision.utils import save_image


class Diffusion:
    def __init__(self, noise_steps=1000, beta_start=1e-4, beta_end=0.02, img_size=64, device="cuda"):
        self.noise_steps = noise_steps
        self.beta = torch.linspace(beta_start, beta_end, noise_steps)
        self.alpha = 1 - self.beta
        self.alpha_hat = torch.cumprod(self.alpha, dim=0)
        self.img_size = img_size
        self.device = device

    def noise_images(self, x, t):
        a = torch.sqrt(self.alpha_hat[t])[:, None, None, None].to(self.device)
        b = torch.sqrt(1 - self.alpha_hat[t])[:, None, None, None].to(self.device)
        eps = torch.randn_like(x)
        return a * x + b * eps, eps

    def sample_timesteps(self, n):
        return torch.randint(low=1, high=self.noise_steps, size=(n,))

    def sample(self, model, n):
        model.eval()
        with torch.no_grad():
            x = torch.randn((n, 3, self.img_size, self.img_size)).to(self.device)
            for i in reversed(range(1, self.noise_steps)):
                t = (torch.ones(n) * i).long().to(self.device)
                predicted_noise = model(x, t)
                alpha = self.alpha[t][:, None, None, None].to(self.device)
                alpha_hat = self.alpha_hat[t][:, None, None, None].to(self.device)
                beta = self.beta[t][:, None, None, None].to(self.device)
                noise = torch.randn_like(x) if i > 1 else torch.zeros_like(x)
                x = 1 / torch.sqrt(alpha) * (x - ((1 - alpha) / torch.sqrt(1 - alpha_hat)) * predicted_noise) + beta * noise
        model.train()
        return x


def train(model, dataloader, args):
    optimizer = optim.AdamW(model.parameters(), lr=args.lr)
    mse = nn.MSELoss()
    diffusion = Diffusion(device=args.device)
    for epoch in range(args.epochs):
        for images, _ in dataloader:
            images = images.to(args.device)
            t = diffusion.sample_timesteps(images.shape[0]).to(args.device)
            x_t, noise = diffusion.noise_images(images, t)
            loss = mse(noise, model(x_t, t))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        sampled = diffusion.sample(model, n=images.shape[0])
        save_image(sampled.add(1).mul(0.5), os.path.join("results", f"{epoch}.jpg"))
