# Source: https://github.com/pytorch/pytorch/pull/23007
# Report: SGD with weight_decay leaked memory every step: the decayed gradient was built from the parameter with autograd on, and the momentum buffer kept in the optimizer state carried that graph from step to step
# Shape: a hand-written SGD step (no torch.no_grad) computes d_p = grad + wd * p from the leaf parameter and folds it into the persistent momentum buffer in self.state
# Expect: TML005 line 32
import torch
from torch.optim import Optimizer


class SGDW(Optimizer):
    """Plain SGD with momentum and L2 weight decay (project-local copy)."""

    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=False):
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            wd = group["weight_decay"]
            momentum = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad
                if wd != 0:
                    d_p = d_p + wd * p
                if momentum != 0:
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = torch.zeros_like(p.data)
                    # buf <- momentum * buf + d_p
                    state["momentum_buffer"] = momentum * state["momentum_buffer"] + d_p  # expect: TML005
                    buf = state["momentum_buffer"]
                    d_p = d_p + momentum * buf if group["nesterov"] else buf
                p.data.add_(d_p.data, alpha=-group["lr"])
        return loss


def train(model, loader, epochs=90):
    opt = SGDW(model.parameters(), lr=0.1, weight_decay=1e-4)
    criterion = torch.nn.CrossEntropyLoss()
    for _ in range(epochs):
        for images, target in loader:
            images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
            loss = criterion(model(images), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
