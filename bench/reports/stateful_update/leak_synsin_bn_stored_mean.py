# Source: https://github.com/facebookresearch/synsin/pull/20
# Report: SynSin's custom batch-norm updates self.stored_mean/self.stored_var from the batch statistics without protecting them from autograd, extending the computation graph on every bn.forward() and leaking ~7MB/s until training crashes.
# Shape: in training mode the running buffers are overwritten in place with a momentum blend of the previous buffer and the graph-carrying batch mean/var, so each step's buffer links to the previous step's graph and the chain grows for the whole run.
# Expect: TML005 lines 35, 36
import torch
import torch.nn as nn


def manual_bn(x, gain, bias, eps=1e-5):
    mean = x.mean(dim=(0, 2, 3))
    var = x.var(dim=(0, 2, 3), unbiased=False)
    scale = torch.rsqrt(var + eps).view(1, -1, 1, 1) * gain
    shift = bias - mean.view(1, -1, 1, 1) * scale
    return x * scale + shift, mean, var


class bn(nn.Module):
    def __init__(self, num_channels, eps=1e-5, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("stored_mean", torch.zeros(num_channels))
        self.register_buffer("stored_var", torch.ones(num_channels))

    def forward(self, x, gain, bias):
        if not self.training:
            mean = self.stored_mean.view(1, -1, 1, 1)
            var = self.stored_var.view(1, -1, 1, 1)
            scale = torch.rsqrt(var + self.eps) * gain
            return x * scale + (bias - mean * scale)

        out, mean, var = manual_bn(x, gain, bias, eps=self.eps)
        # running averages for inference
        m = self.momentum
        self.stored_mean[:] = self.stored_mean * (1 - m) + mean * m  # expect: TML005
        self.stored_var[:] = self.stored_var * (1 - m) + var * m  # expect: TML005
        return out


class ccbn(nn.Module):
    def __init__(self, output_size, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(output_size))
        self.bias = nn.Parameter(torch.zeros(output_size))
        self.bn = bn(output_size, eps, momentum)

    def forward(self, x, y=None):
        return self.bn(x, gain=self.gain.view(1, -1, 1, 1), bias=self.bias.view(1, -1, 1, 1))
