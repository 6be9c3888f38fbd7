# Modelled on: https://github.com/f-dangel/backpack/issues/258
# Report: memory increased in small increments every iteration in code that called .backward(..., create_graph=True).
import torch


class CurvatureProbe:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion
        self.params = [p for p in model.parameters() if p.requires_grad]

    def hvp_norm(self, x, y, v):
        loss = self.criterion(self.model(x), y)
        loss.backward(create_graph=True)  # expect: TML013
        dot = sum((p.grad * vi).sum() for p, vi in zip(self.params, v))
        hv = torch.autograd.grad(dot, self.params)
        return torch.sqrt(sum(h.pow(2).sum() for h in hv)).item()

    def run(self, loader, v):
        return [self.hvp_norm(x, y, v) for x, y in loader]
