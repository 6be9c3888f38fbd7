# Source: https://github.com/dmarnerides/pydlt/blob/0a3cbee782dd103793eb815301f231894597aaff/dlt/train/began.py
# Report: pydlt's BEGANTrainer updates the equilibrium weight k after every discriminator step from Python scalars of real_loss and fake_loss (_get_scalar_value(loss.data) upstream)
# Shape: balance is built from real_loss.item() and fake_loss.item(), so self.k = min(max(self.k + lambda_k * balance, 0), 1) stays a Python float between steps and each d_loss only holds its own step's graph
# Expect: near-miss: must be silent
import math

import torch
import torch.nn as nn


class GANBaseTrainer:
    def __init__(self, generator, discriminator, g_optimizer, d_optimizer, d_iter=1):
        self._models = {"generator": generator, "discriminator": discriminator}
        self._optimizers = {"generator": g_optimizer, "discriminator": d_optimizer}
        self.d_iter = d_iter
        self.d_iter_counter = 0
        self.training = True
        self._losses = {"training": [], "validation": []}

    def train(self):
        self.training = True
        for m in self._models.values():
            m.train()

    def eval(self):
        self.training = False
        for m in self._models.values():
            m.eval()

    def __call__(self, loader, z_dim, device):
        for real_input, _ in loader:
            real_input = real_input.to(device)
            g_input = torch.randn(real_input.size(0), z_dim, device=device)
            losses = {}
            if self.training:
                prediction, losses["d_loss"] = self.d_step(g_input, real_input)
            if not self.training or self.d_iter_counter % self.d_iter == 0:
                prediction, losses["g_loss"] = self.g_step(g_input, real_input)
            yield real_input, (prediction, losses)


class BEGANTrainer(GANBaseTrainer):
    def __init__(self, generator, discriminator, g_optimizer, d_optimizer, lambda_k, gamma, d_iter=1):
        super().__init__(generator, discriminator, g_optimizer, d_optimizer, d_iter)
        self._losses["training"] = ["d_loss", "real_loss", "fake_loss", "k", "balance", "measure"]
        self._losses["validation"] = ["g_loss"]
        self.k = 0.0
        self.lambda_k = lambda_k
        self.gamma = gamma

    def d_step(self, g_input, real_input):
        for p in self._models["discriminator"].parameters():
            p.requires_grad = True
        self._models["discriminator"].zero_grad()
        with torch.no_grad():
            prediction = self._models["generator"](g_input)
        fake_loss = (self._models["discriminator"](prediction) - prediction).abs().mean()
        real_loss = (self._models["discriminator"](real_input) - real_input).abs().mean()

        d_loss = real_loss - self.k * fake_loss
        d_loss.backward()
        self._optimizers["discriminator"].step()

        balance = self.gamma * real_loss.item() - fake_loss.item()
        self.k = min(max(self.k + self.lambda_k * balance, 0), 1)
        measure = real_loss.item() + math.fabs(balance)

        ret_losses = {"d_loss": d_loss.item(), "real_loss": real_loss.item(), "fake_loss": fake_loss.item(),
                      "k": float(self.k), "measure": measure, "balance": float(balance)}
        self.d_iter_counter += 1
        return prediction, ret_losses

    def g_step(self, g_input, real_input):
        for p in self._models["discriminator"].parameters():
            p.requires_grad = False
        if self.training:
            self._models["generator"].zero_grad()
            prediction = self._models["generator"](g_input)
            error = (self._models["discriminator"](prediction) - prediction).abs().mean()
            error.backward()
            self._optimizers["generator"].step()
        else:
            with torch.no_grad():
                prediction = self._models["generator"](g_input)
                error = (self._models["discriminator"](prediction) - prediction).abs().mean()
        return prediction.detach(), {"g_loss": error.item()}


def fit(trainer, loader, epochs, z_dim, device):
    trainer.train()
    for epoch in range(epochs):
        for batch, (prediction, loss) in trainer(loader, z_dim, device):
            if "d_loss" in loss:
                print(epoch, loss["d_loss"]["measure"], loss["d_loss"]["k"])
