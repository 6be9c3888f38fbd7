# Source: https://github.com/bayesiains/nflows/pull/11
# Report: fix for nflows issue #10 (RAM growth from batch norm between flow layers): detach the graph before computing the running mean and variance, which the maintainer confirmed keeps memory usage flat.
# Shape: fixed variant: the buffers are still updated in place with mul_().add_() in forward, but from detached copies of the batch statistics, so no grad_fn ever attaches to running_mean/running_var.
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class BatchNormTransform(nn.Module):
    """Batch norm as an invertible flow transform (1-dim inputs only)."""

    def __init__(self, features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        constant = np.log(np.exp(1 - eps) - 1)
        self.unconstrained_weight = nn.Parameter(constant * torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.zeros(features))

    @property
    def weight(self):
        return F.softplus(self.unconstrained_weight) + self.eps

    def forward(self, inputs, context=None):
        if inputs.dim() != 2:
            raise ValueError(f"Expected 2-dim inputs, got {tuple(inputs.shape)}")
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean.detach() * self.momentum)
            self.running_var.mul_(1 - self.momentum).add_(var.detach() * self.momentum)
        else:
            mean, var = self.running_mean, self.running_var
        outputs = self.weight * ((inputs - mean) / torch.sqrt(var + self.eps)) + self.bias
        logabsdet_ = torch.log(self.weight) - 0.5 * torch.log(var + self.eps)
        logabsdet = torch.sum(logabsdet_) * inputs.new_ones(inputs.shape[0])
        return outputs, logabsdet


def train_flow(flow, sample_batch, num_iter=1000, lr=1e-3):
    optimizer = torch.optim.Adam(flow.parameters(), lr=lr)
    for _ in range(num_iter):
        x = sample_batch(1024)
        optimizer.zero_grad()
        loss = -flow.log_prob(inputs=x).mean()
        loss.backward()
        optimizer.step()
    return flow
