# Source: https://github.com/Asthestarsfalll/Symbolic-Music-Genre-Transfer-with-CycleGAN-for-pytorch/issues/4
# Report: a CycleGAN for music genre transfer ran out of GPU memory as steps went by even at batch size 1; every one of its six losses was backpropagated with retain_graph=True.
# Shape: the pool keeps detached samples, the generator and discriminator losses are summed and backpropagated once per step without retaining the graph.
# Expect: near-miss: must be silent
import random

import torch
import torch.nn as nn


class FakePool:
    def __init__(self, capacity=50):
        self.capacity = capacity
        self.items = []

    def __call__(self, fakes):
        fakes = tuple(fake.detach() for fake in fakes)
        if len(self.items) < self.capacity:
            self.items.append(fakes)
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
        gen_loss = self.mse(score_b, torch.ones_like(score_b)) + self.mse(score_a, torch.ones_like(score_a)) + 20 * cycle
        disc_loss = self.mse(self.disc_a(real_a), torch.ones_like(score_a)) + self.mse(self.disc_a(pooled_a), torch.zeros_like(score_a)) \
            + self.mse(self.disc_b(real_b), torch.ones_like(score_b)) + self.mse(self.disc_b(pooled_b), torch.zeros_like(score_b))
        return gen_loss + disc_loss


def train(model, loader, optimizers, epochs, device):
    for epoch in range(epochs):
        for real_a, real_b in loader:
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss = model(real_a.to(device), real_b.to(device))
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
