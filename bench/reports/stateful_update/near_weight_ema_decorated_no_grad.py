# Source: https://github.com/fadel/pytorch_ema/issues/1
# Report: the maintainer answered that the helper already runs its updates without autograd, so nothing of the graph is stored in the shadow copies.
# Shape: same shadow-list EMA, the update method is decorated with @torch.no_grad().
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class WeightEMA:
    def __init__(self, model: nn.Module, decay=0.999):
        self.decay = decay
        self.shadow = [p.detach().clone() for p in model.parameters()]

    @torch.no_grad()
    def update(self, model: nn.Module):
        for i, param in enumerate(model.parameters()):
            self.shadow[i] = self.decay * self.shadow[i] + (1 - self.decay) * param

    @torch.no_grad()
    def copy_to(self, model: nn.Module):
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
