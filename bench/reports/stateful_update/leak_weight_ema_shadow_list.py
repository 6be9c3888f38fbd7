# Source: https://github.com/fadel/pytorch_ema/issues/1
# Report: a user of an exponential-moving-average-of-weights helper asked where torch.no_grad() belongs to reduce memory; the shadow update must not be recorded by autograd.
# Shape: rewrite without the no_grad: the shadow list is rebound from live parameters in a method called once per training step.
# Expect: TML005 line 16
import torch
import torch.nn as nn


class WeightEMA:
    def __init__(self, model: nn.Module, decay=0.999):
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters()]

    def update(self, model: nn.Module):
        for i, param in enumerate(model.parameters()):
            self.shadow[i] = self.decay * self.shadow[i] + (1 - self.decay) * param  # expect: TML005

    def copy_to(self, model: nn.Module):
        with torch.no_grad():
            for shadow, param in zip(self.shadow, model.parameters()):
                param.copy_(shadow)


model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))
ema = WeightEMA(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5000):
    x, y = torch.randn(64, 32), torch.randn(64, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)
