# Source: https://github.com/ultralytics/ultralytics/pull/25315
# Report: A PR batching ModelEMA's update with _foreach_lerp_ dropped the explicit .detach() on the model tensors; review flagged a possible ever-growing autograd graph, and the author answered that state_dict() already returns detached tensors.
# Shape: the EMA update reads the live model through state_dict() (keep_vars=False, so detached) and updates the EMA tensors in place; nothing carries a graph between steps.
# Expect: near-miss: must be silent
import copy
import math

import torch
from torch import nn


class ModelEMA:
    def __init__(self, model: nn.Module, decay=0.9999, tau=2000):
        self.ema = copy.deepcopy(model).eval()
        self.updates = 0
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model: nn.Module):
        self.updates += 1
        d = self.decay(self.updates)
        msd = model.state_dict()
        ema_v, model_v = [], []
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                ema_v.append(v)
                model_v.append(msd[k])
        torch._foreach_lerp_(ema_v, model_v, 1.0 - d)


def train(model, loader, optimizer, criterion):
    ema = ModelEMA(model)
    for x, y in loader:
        loss = criterion(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(model)
    return ema.ema
