# Source: https://github.com/Asthestarsfalll/Symbolic-Music-Genre-Transfer-with-CycleGAN-for-pytorch/issues/4
# Report: a CycleGAN for music genre transfer ran out of GPU memory as steps went by even at batch size 1; every one of its six losses was backpropagated with retain_graph=True.
# Shape: the model keeps a pool of generated samples that are not detached, and each step backpropagates every loss with retain_graph=True, the last one included, so the pooled samples hold their retained generator graphs.
# Expect: TML006 line 53; TML001 line 18
import random

import torch
import torch.nn as nn


class FakePool:
    def __init__(self, capacity=50):
        self.capacity = capacity
        self.items = []

    def __call__(self, fakes):
        if len(self.items) < self.capacity:
            self.items.append(fakes)  # expect: TML001
            return fakes
        if random.random() < 0.5:
            slot = random.randrange(self.capacity)
            old, self.items[slot] = self.items[slot], fakes
            return old
        return fakes


class GenreGAN(nn.Module):
    def __init__(self, gen_ab, gen_ba, disc_a, disc_b):
        super().__init__()
        self.gen_ab, self.gen_ba, self.disc_a, self.disc_b = gen_ab, gen_ba, disc_a, disc_b
        self.pool = FakePool()
        self.mse = nn.MSELoss()

    def forward(self, real_a, real_b):
        fake_b, fake_a = self.gen_ab(real_a), self.gen_ba(real_b)
        pooled_a, pooled_b = self.pool((fake_a, fake_b))
        cycle = (self.gen_ba(fake_b) - real_a).abs().mean() + (self.gen_ab(fake_a) - real_b).abs().mean()
        score_b, score_a = self.disc_b(fake_b), self.disc_a(fake_a)
        gen_ab_loss = self.mse(score_b, torch.ones_like(score_b)) + 10 * cycle
        gen_ba_loss = self.mse(score_a, torch.ones_like(score_a)) + 10 * cycle
        disc_a_loss = self.mse(self.disc_a(real_a), torch.ones_like(score_a)) + self.mse(self.disc_a(pooled_a), torch.zeros_like(score_a))
        disc_b_loss = self.mse(self.disc_b(real_b), torch.ones_like(score_b)) + self.mse(self.disc_b(pooled_b), torch.zeros_like(score_b))
        return gen_ab_loss, gen_ba_loss, disc_a_loss, disc_b_loss


def train(model, loader, optimizers, epochs, device):
    for epoch in range(epochs):
        for real_a, real_b in loader:
            for optimizer in optimizers:
                optimizer.zero_grad()
            losses = model(real_a.to(device), real_b.to(device))
            for loss in losses:
                loss.backward(retain_graph=True)  # expect: TML006
            for optimizer in optimizers:
                optimizer.step()
