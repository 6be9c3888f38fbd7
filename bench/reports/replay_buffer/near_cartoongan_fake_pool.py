# Source: https://github.com/athp18/CartoonGAN/blob/main/optimizations.py
# Report: CycleGAN fake-image ReplayBuffer (history of 50 generated images for the discriminators), fed with the generator output inside train_step.
# Shape: push_and_pop iterates over data.data, so the images stored in self.data are detached from the generator graph; train_step returns only .item() floats that the epoch dict sums.
# Expect: near-miss: must be silent
import itertools
import random

import torch
import torch.nn as nn


class ReplayBuffer:
    def __init__(self, max_size=50):
        self.max_size = max_size
        self.data = []

    def push_and_pop(self, data):
        result = []
        for element in data.data:
            element = torch.unsqueeze(element, 0)
            if len(self.data) < self.max_size:
                self.data.append(element)
                result.append(element)
            elif random.uniform(0, 1) > 0.5:
                idx = random.randint(0, self.max_size - 1)
                old = self.data[idx].clone()
                self.data[idx] = element
                result.append(old)
            else:
                result.append(element)
        return torch.cat(result)


class CycleGAN:
    def __init__(self, make_G, make_D, device):
        self.G_AB, self.G_BA = make_G().to(device), make_G().to(device)
        self.D_A, self.D_B = make_D().to(device), make_D().to(device)
        self.gan_loss, self.l1 = nn.MSELoss(), nn.L1Loss()
        self.opt_G = torch.optim.Adam(itertools.chain(self.G_AB.parameters(), self.G_BA.parameters()), lr=2e-4)
        self.opt_D_A = torch.optim.Adam(self.D_A.parameters(), lr=2e-4)
        self.opt_D_B = torch.optim.Adam(self.D_B.parameters(), lr=2e-4)
        self.fake_A_pool = ReplayBuffer(50)
        self.fake_B_pool = ReplayBuffer(50)

    def _d_step(self, D, opt, real, fake):
        opt.zero_grad(set_to_none=True)
        pred_real, pred_fake = D(real), D(fake.detach())
        loss = 0.5 * (self.gan_loss(pred_real, torch.ones_like(pred_real))
                      + self.gan_loss(pred_fake, torch.zeros_like(pred_fake)))
        loss.backward()
        opt.step()
        return loss

    def train_step(self, real_A, real_B):
        self.opt_G.zero_grad(set_to_none=True)
        fake_B = self.G_AB(real_A)
        fake_A = self.G_BA(real_B)
        pred_B, pred_A = self.D_B(fake_B), self.D_A(fake_A)
        loss_gan = self.gan_loss(pred_B, torch.ones_like(pred_B)) + self.gan_loss(pred_A, torch.ones_like(pred_A))
        loss_cycle = 10.0 * (self.l1(self.G_BA(fake_B), real_A) + self.l1(self.G_AB(fake_A), real_B))
        loss_G = loss_gan + loss_cycle
        loss_G.backward()
        self.opt_G.step()

        pooled_A = self.fake_A_pool.push_and_pop(fake_A)
        loss_D_A = self._d_step(self.D_A, self.opt_D_A, real_A, pooled_A)
        pooled_B = self.fake_B_pool.push_and_pop(fake_B)
        loss_D_B = self._d_step(self.D_B, self.opt_D_B, real_B, pooled_B)
        return {
            "loss_G": loss_G.item(),
            "loss_D_A": loss_D_A.item(),
            "loss_D_B": loss_D_B.item(),
            "loss_GAN": loss_gan.item(),
            "loss_cycle": loss_cycle.item(),
        }


def train(model, dataloader, device, num_epochs=200):
    history = []
    for epoch in range(num_epochs):
        epoch_metrics = {"loss_G": 0.0, "loss_D_A": 0.0, "loss_D_B": 0.0, "loss_GAN": 0.0, "loss_cycle": 0.0}
        for batch in dataloader:
            losses = model.train_step(batch["A"].to(device), batch["B"].to(device))
            for key in epoch_metrics:
                epoch_metrics[key] += losses[key]
        for key in epoch_metrics:
            epoch_metrics[key] /= len(dataloader)
        history.append(dict(epoch_metrics))
        print(f"epoch {epoch + 1}: G {epoch_metrics['loss_G']:.4f} D_A {epoch_metrics['loss_D_A']:.4f}")
    return history
