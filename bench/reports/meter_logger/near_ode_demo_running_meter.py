# Source: https://github.com/rtqichen/torchdiffeq/blob/master/examples/ode_demo.py
# Report: neural-ODE spiral fitting demo as the repository has it: the RunningAverageMeter that smooths the training loss is fed loss.item(), a Python float
# Shape: loss_meter outlives the loop and its update() keeps an EMA on self, but it only ever sees floats, so each iteration's odeint graph is freed after backward; evaluation runs under torch.no_grad()
# Expect: near-miss: must be silent
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torchdiffeq import odeint

parser = argparse.ArgumentParser("ODE demo")
parser.add_argument("--data_size", type=int, default=1000)
parser.add_argument("--batch_time", type=int, default=10)
parser.add_argument("--batch_size", type=int, default=20)
parser.add_argument("--niters", type=int, default=2000)
parser.add_argument("--test_freq", type=int, default=20)
args = parser.parse_args()

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
true_y0 = torch.tensor([[2.0, 0.0]]).to(device)
t = torch.linspace(0.0, 25.0, args.data_size).to(device)
true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]).to(device)


class CubicDynamics(nn.Module):
    def forward(self, t, y):
        return torch.mm(y ** 3, true_A)


with torch.no_grad():
    true_y = odeint(CubicDynamics(), true_y0, t, method="dopri5")


def sample_batch():
    starts = np.random.choice(np.arange(args.data_size - args.batch_time, dtype=np.int64),
                              args.batch_size, replace=False)
    s = torch.from_numpy(starts)
    batch_y0 = true_y[s]
    batch_t = t[:args.batch_time]
    batch_y = torch.stack([true_y[s + i] for i in range(args.batch_time)], dim=0)
    return batch_y0.to(device), batch_t.to(device), batch_y.to(device)


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 50), nn.Tanh(), nn.Linear(50, 2))
        for m in self.net.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0, std=0.1)
                nn.init.constant_(m.bias, val=0)

    def forward(self, t, y):
        return self.net(y ** 3)


class RunningAverageMeter:
    """Exponential running average of a logged quantity."""

    def __init__(self, momentum=0.99):
        self.momentum = momentum
        self.reset()

    def reset(self):
        self.val = None
        self.avg = 0

    def update(self, val):
        if self.val is None:
            self.avg = val
        else:
            self.avg = self.avg * self.momentum + val * (1 - self.momentum)
        self.val = val


if __name__ == "__main__":
    func = ODEFunc().to(device)
    optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
    time_meter = RunningAverageMeter(0.97)
    loss_meter = RunningAverageMeter(0.97)
    end = time.time()

    for itr in range(1, args.niters + 1):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = sample_batch()
        pred_y = odeint(func, batch_y0, batch_t).to(device)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()

        time_meter.update(time.time() - end)
        loss_meter.update(loss.item())

        if itr % args.test_freq == 0:
            with torch.no_grad():
                pred_y = odeint(func, true_y0, t)
                test_loss = torch.mean(torch.abs(pred_y - true_y))
            print("Iter {:04d} | Test Loss {:.6f} | Running {:.6f} | {:.3f}s/it".format(
                itr, test_loss.item(), float(loss_meter.avg), time_meter.avg))
        end = time.time()
