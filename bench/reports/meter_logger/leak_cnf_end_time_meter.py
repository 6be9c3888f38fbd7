# Source: https://github.com/rtqichen/ffjord/blob/994864ad0517db3549717c25170f9b71e96788b1/train_toy.py
# Report: audit: with the default --train_T True each CNF's sqrt_end_time is an nn.Parameter, so count_total_time() returns a graph-attached tensor, and tt_meter.update(total_time) folds it into a RunningAverageMeter whose avg = avg * m + val * (1 - m) links every iteration's graph to the last
# Shape: continuous normalizing flow toy trainer with several running-average meters; the time meter receives the attached end-time sum while the loss meter gets loss.item()
# Expect: TML001 line 83
import time

import torch
import torch.nn as nn


class RunningAverageMeter:
    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.val, self.avg = None, 0

    def update(self, val):
        self.avg = val if self.val is None else self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


class CNF(nn.Module):
    """Euler-integrated CNF with a learnable end time T = sqrt_end_time ** 2."""

    def __init__(self, dim=2, T=0.5, train_T=True, steps=20):
        super().__init__()
        if train_T:
            self.sqrt_end_time = nn.Parameter(torch.sqrt(torch.tensor(T)))
        else:
            self.register_buffer("sqrt_end_time", torch.sqrt(torch.tensor(T)))
        self.odefunc = nn.Sequential(nn.Linear(dim + 1, 64), nn.Tanh(), nn.Linear(64, dim))
        self.steps = steps

    def forward(self, z, logp):
        dt = self.sqrt_end_time * self.sqrt_end_time / self.steps
        for k in range(self.steps):
            t = (k * dt).reshape(1, 1)
            z = z.requires_grad_(True)
            dz = self.odefunc(torch.cat([z, t.expand(z.size(0), 1)], dim=1))
            div = sum(torch.autograd.grad(dz[:, i].sum(), z, create_graph=True)[0][:, i] for i in range(z.size(1)))
            z, logp = z + dt * dz, logp - dt * div.unsqueeze(1)
        return z, logp


class SequentialFlow(nn.Module):
    def __init__(self, *layers):
        super().__init__()
        self.chain = nn.ModuleList(layers)

    def forward(self, x, logp):
        for layer in self.chain:
            x, logp = layer(x, logp)
        return x, logp


def count_total_time(model):
    total = 0
    for m in model.modules():
        if isinstance(m, CNF):
            total = total + m.sqrt_end_time * m.sqrt_end_time
    return total


def compute_loss(model, sample_batch, batch_size, device):
    x = sample_batch(batch_size).to(device)
    z, delta_logp = model(x, torch.zeros(x.size(0), 1, device=device))
    logpz = (-0.5 * z.pow(2) - 0.5 * torch.log(torch.tensor(2 * torch.pi))).sum(1, keepdim=True)
    return -(logpz + delta_logp).mean()


def train(sample_batch, niters=10000, batch_size=512, device="cuda"):
    model = SequentialFlow(CNF(), CNF()).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    time_meter, loss_meter, tt_meter = RunningAverageMeter(0.93), RunningAverageMeter(0.93), RunningAverageMeter(0.93)
    end = time.time()
    for itr in range(1, niters + 1):
        optimizer.zero_grad()
        loss = compute_loss(model, sample_batch, batch_size, device)
        loss_meter.update(loss.item())
        total_time = count_total_time(model)
        loss.backward()
        optimizer.step()
        time_meter.update(time.time() - end)
        tt_meter.update(total_time)  # expect: TML001
        if itr % 100 == 0:
            print(f"Iter {itr:05d} | Loss {loss_meter.val:.4f}({loss_meter.avg:.4f}) | "
                  f"CNF Time {float(tt_meter.val):.3f}({float(tt_meter.avg):.3f}) | {time_meter.avg:.3f}s/it")
        end = time.time()
    return model
