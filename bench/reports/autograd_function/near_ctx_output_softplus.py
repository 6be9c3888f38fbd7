# Source: https://github.com/pytorch/pytorch/issues/25340
# Report: a custom autograd.Function that assigns its own output tensor to an attribute of ctx makes a ctx <-> output cycle; the contexts are never collected and memory spirals upward
# Shape: same activation and training loop, but the output is handed to ctx.save_for_backward (only the float beta stays on ctx), as the answer recommends
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledSoftplus(torch.autograd.Function):
    """softplus(beta * x) / beta with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, beta):
        out = F.softplus(x, beta=beta)
        ctx.beta = beta
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        # d/dx softplus = sigmoid(beta * x) = 1 - exp(-beta * out)
        (out,) = ctx.saved_tensors
        slope = 1.0 - torch.exp(-ctx.beta * out)
        return grad_out * slope, None


class SoftplusMLP(nn.Module):
    def __init__(self, d_in, d_hidden, d_out, beta=2.0):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.out = nn.Linear(d_hidden, d_out)
        self.beta = beta

    def forward(self, x):
        x = ScaledSoftplus.apply(self.fc1(x), self.beta)
        x = ScaledSoftplus.apply(self.fc2(x), self.beta)
        return self.out(x)


class RunningLog:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def add(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def mean(self):
        return self.total / max(self.count, 1)


def fit(model, loader, epochs=20, lr=3e-4, device="cuda"):
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    history = []
    for epoch in range(epochs):
        log = RunningLog()
        model.train()
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            pred = model(x)
            loss = F.smooth_l1_loss(pred, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            log.add(loss.item(), x.size(0))
        history.append(log.mean)
        print(f"epoch {epoch:3d}  train loss {log.mean:.5f}")
    return history
