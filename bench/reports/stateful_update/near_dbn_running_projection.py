# Source: https://github.com/huangleiBuaa/IterNorm-pytorch/issues/1
# Report: decorrelated batch norm (DBN) leaked GPU memory: running_mean / running_projection were rebound in forward from graph-attached batch statistics
# Shape: the fix from the report: the running buffers are blended with mean.data / whiten.data, so no graph is carried between steps
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class DecorrelatedBatchNorm(nn.Module):
    """Group-wise ZCA whitening with running statistics for inference."""

    def __init__(self, num_features, num_groups=16, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.num_features = num_features
        self.num_groups = num_groups
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        if affine:
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_groups, 1))
        self.register_buffer("running_projection", torch.eye(num_groups))

    def _flatten_groups(self, x):
        n, c = x.shape[:2]
        x = x.reshape(n * c // self.num_groups, self.num_groups, *x.shape[2:])
        return x.transpose(0, 1).contiguous().view(self.num_groups, -1)

    def _unflatten(self, y, shape):
        n, c = shape[:2]
        y = y.view(self.num_groups, n * c // self.num_groups, *shape[2:])
        return y.transpose(0, 1).contiguous().view(shape)

    def forward(self, inp):
        x = self._flatten_groups(inp)
        if self.training:
            mean = x.mean(1, keepdim=True)
            self.running_mean = (1.0 - self.momentum) * self.running_mean + self.momentum * mean.data
            centered = x - mean
            eye = torch.eye(self.num_groups, device=x.device, dtype=x.dtype)
            sigma = centered.matmul(centered.t()) / x.size(1) + self.eps * eye
            u, eig, _ = torch.linalg.svd(sigma)
            whiten = u.matmul(eig.rsqrt().diag()).matmul(u.t())
            self.running_projection = (1.0 - self.momentum) * self.running_projection + self.momentum * whiten.data
            y = whiten.matmul(centered)
        else:
            y = self.running_projection.matmul(x - self.running_mean)
        out = self._unflatten(y, inp.shape)
        if self.affine:
            shape = [1, self.num_features] + [1] * (inp.dim() - 2)
            out = out * self.weight.view(shape) + self.bias.view(shape)
        return out
