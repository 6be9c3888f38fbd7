# Modelled on: https://github.com/facebookresearch/synsin/pull/20
# Report: a custom batch-norm's stored_mean/stored_var were updated with gradients enabled, extending the graph on every forward call; training crashed after days.
import torch
import torch.nn as nn


class CustomBatchNorm(nn.Module):
    def __init__(self, channels, momentum=0.1, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("stored_mean", torch.zeros(channels))
        self.register_buffer("stored_var", torch.ones(channels))

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=(0, 2, 3))
            var = x.var(dim=(0, 2, 3))
            self.stored_mean = (1 - self.momentum) * self.stored_mean + self.momentum * mean  # expect: TML005, TML019
            self.stored_var = (1 - self.momentum) * self.stored_var + self.momentum * var  # expect: TML005, TML019
        else:
            mean, var = self.stored_mean, self.stored_var
        x = (x - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        return x * self.weight[None, :, None, None] + self.bias[None, :, None, None]
