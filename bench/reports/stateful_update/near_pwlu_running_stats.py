# Source: https://github.com/MrGoriay/pwlu-pytorch/issues/1
# Report: the piecewise-linear activation collects running mean/var of its input during a warm-up phase from x without detach, so the statistics keep the activations' graph and GPU memory grows during training
# Shape: same module; the statistics are computed from x.detach() (the fix), so the running buffers rebound on self carry no graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class PWLU(nn.Module):
    """Piecewise linear unit: statistics phase, then learnable breakpoints."""

    def __init__(self, num_regions=16, momentum=0.9, bound_sigma=3.0):
        super().__init__()
        self.num_regions = num_regions
        self.momentum = momentum
        self.bound_sigma = bound_sigma
        self.register_buffer("running_mean", torch.zeros(()))
        self.register_buffer("running_var", torch.ones(()))
        self.left = nn.Parameter(torch.tensor(-3.0))
        self.right = nn.Parameter(torch.tensor(3.0))
        self.heights = nn.Parameter(F.relu(torch.linspace(-3.0, 3.0, num_regions + 1)))
        self.collecting = True

    def finish_collection(self):
        std = self.running_var.sqrt()
        with torch.no_grad():
            self.left.fill_(float(self.running_mean - self.bound_sigma * std))
            self.right.fill_(float(self.running_mean + self.bound_sigma * std))
        self.collecting = False

    def forward(self, x):
        if self.training and self.collecting:
            stats_in = x.detach()
            mean = stats_in.mean(dim=[0, 2, 3]).mean()
            var = stats_in.var(dim=[0, 2, 3]).mean()
            m = self.momentum
            self.running_mean = m * self.running_mean + (1 - m) * mean
            self.running_var = m * self.running_var + (1 - m) * var
            return F.relu(x)
        return self.piecewise(x)

    def piecewise(self, x):
        width = (self.right - self.left) / self.num_regions
        pos = ((x - self.left) / width).clamp(0, self.num_regions - 1e-4)
        idx = pos.floor().long()
        frac = pos - idx
        h = self.heights
        return h[idx] + frac * (h[idx + 1] - h[idx])


def warmup_statistics(model, loader, steps=100, device="cuda"):
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step, (images, labels) in enumerate(loader):
        if step == steps:
            break
        loss = F.cross_entropy(model(images.to(device)), labels.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    for m in model.modules():
        if isinstance(m, PWLU):
            m.finish_collection()
