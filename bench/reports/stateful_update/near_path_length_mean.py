# Source: https://github.com/lucaayscough/Gravity/blob/0f6fda0136edea326456b389a3950447195805d5/Generator/train.py
# Report: audit of the audio StyleGAN trainer's path-length regulariser: the lerped running mean is used attached for this step's penalty but written back into the buffer with copy_(....detach()), so steps never link
# Shape: same trainer; a local pl_mean = self.pl_mean.lerp(attached mean) feeds the penalty, and self.pl_mean is updated in place from pl_mean.detach(): it reads its own value but carries no graph
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


class GANTrainer:
    def __init__(self, netG, netD, dataset, batch_size=16, z_dim=512, lr=2e-3, device="cuda"):
        self.netG, self.netD = netG.to(device), netD.to(device)
        self.loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
        self.batch_size, self.z_dim, self.device = batch_size, z_dim, device
        self.opt_g = torch.optim.Adam(self.netG.parameters(), lr=lr, betas=(0.0, 0.99))
        self.opt_d = torch.optim.Adam(self.netD.parameters(), lr=lr, betas=(0.0, 0.99))
        self.g_reg, self.pl_decay, self.pl_weight, self.pl_shrink = 8, 0.01, 2.0, 2
        self.pl_mean = torch.zeros((), device=device)
        self.losses = {}

    def _set_requires_grad(self, module, flag):
        for p in module.parameters():
            p.requires_grad = flag

    def train_discriminator(self, real):
        self._set_requires_grad(self.netD, True)
        self._set_requires_grad(self.netG, False)
        self.opt_d.zero_grad(set_to_none=True)
        fake = self.netG(torch.randn(self.batch_size, self.z_dim, device=self.device))
        loss = F.softplus(self.netD(fake)).mean() + F.softplus(-self.netD(real)).mean()
        loss.backward()
        self.opt_d.step()
        self.losses["d"] = loss.item()

    def path_length_penalty(self, noise):
        n = noise.shape[0] // self.pl_shrink
        sounds, w = self.netG(noise[:n], return_w=True)
        pl_noise = torch.randn_like(sounds) / np.sqrt(sounds.shape[2])
        grads = torch.autograd.grad((sounds * pl_noise).sum(), w, create_graph=True)[0]
        pl_lengths = grads.square().sum(2).mean(1).sqrt()
        pl_mean = self.pl_mean.lerp(pl_lengths.mean(), self.pl_decay)
        self.pl_mean.copy_(pl_mean.detach())
        penalty = (pl_lengths - pl_mean).square() * self.pl_weight
        return (sounds[:, 0, 0] * 0 + penalty).mean()

    def train_generator(self, idx):
        self._set_requires_grad(self.netD, False)
        self._set_requires_grad(self.netG, True)
        self.opt_g.zero_grad(set_to_none=True)
        noise = torch.randn(self.batch_size, self.z_dim, device=self.device)
        loss_g = F.softplus(-self.netD(self.netG(noise))).mean()
        loss_g.backward()
        if idx % self.g_reg == 0:
            self.opt_g.zero_grad(set_to_none=True)
            self.path_length_penalty(noise).mul(self.g_reg).backward()
        self.opt_g.step()
        self.losses["g"] = loss_g.item()

    def fit(self, epochs):
        for epoch in range(epochs):
            for idx, (real, *_) in enumerate(self.loader):
                self.train_discriminator(real.to(self.device))
                self.train_generator(idx)
                if idx % 100 == 0:
                    print(f"epoch {epoch} step {idx} D {self.losses['d']:.4f} G {self.losses['g']:.4f}")
