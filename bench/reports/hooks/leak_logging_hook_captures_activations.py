# Source: https://theneuralbase.com/pytorch/learn/intermediate/memory-leak-detection/
# Report: memory-leak guide: the sneakiest leak is a logging hook that captures activations; the stored outputs keep their graphs and GPU memory climbs every step
# Shape: an activation-statistics logger registers its hooks once, but the hook closure appends the raw module outputs (graph attached) to a per-layer list that is only flushed at epoch end
# Expect: TML001 line 21
from collections import defaultdict

import torch
import torch.nn as nn


class ActivationLogger:
    def __init__(self, model, layer_types=(nn.Conv2d, nn.Linear)):
        self.records = defaultdict(list)
        self.handles = []
        for name, module in model.named_modules():
            if isinstance(module, layer_types):
                self.handles.append(module.register_forward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.records[name].append(output)  # expect: TML001
        return hook

    def summary(self):
        out = {}
        for name, acts in self.records.items():
            stacked = torch.stack([a.float().mean() for a in acts])
            out[name] = (stacked.mean().item(), stacked.std().item())
        self.records.clear()
        return out

    def close(self):
        for h in self.handles:
            h.remove()


def train(model, loader, epochs=5, device="cuda"):
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    logger = ActivationLogger(model)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, logger.summary())
    logger.close()
