# Source: https://github.com/hosseinshn/GradNorm/issues/9
# Report: adapting the GradNorm code to a transformer, CUDA ran out of memory as the iterations grew; the reporter suspected loss.backward(retain_graph=True) and the per-task autograd.grad(..., retain_graph=True).
# Shape: a helper method backpropagates each task loss separately to collect per-task gradients, retaining the graph on every call including the last task, and keeps the stacked task losses for loss-ratio weighting.
# Expect: TML006 line 19; TML001 line 15
import torch
import torch.nn as nn


class PerTaskGradients:
    def __init__(self, shared: nn.Module):
        self.shared = shared
        self.loss_history = []

    def collect(self, task_losses):
        self.loss_history.append(torch.stack(task_losses))  # expect: TML001
        grads = []
        for loss in task_losses:
            self.shared.zero_grad()
            loss.backward(retain_graph=True)  # expect: TML006
            grads.append([p.grad.clone() for p in self.shared.parameters()])
        return grads


def train(shared, heads, loader, epochs=10):
    balancer = PerTaskGradients(shared)
    optimizer = torch.optim.Adam(list(shared.parameters()) + [p for h in heads for p in h.parameters()])
    for epoch in range(epochs):
        for x, targets in loader:
            optimizer.zero_grad()
            features = shared(x)
            task_losses = [nn.functional.mse_loss(head(features), t) for head, t in zip(heads, targets)]
            grads = balancer.collect(task_losses)
            with torch.no_grad():
                ratios = balancer.loss_history[-1] / balancer.loss_history[0]
                for i, p in enumerate(shared.parameters()):
                    p.grad = sum(r * g[i] / (g[i].norm() + 1e-12) for r, g in zip(ratios, grads))
            optimizer.step()
