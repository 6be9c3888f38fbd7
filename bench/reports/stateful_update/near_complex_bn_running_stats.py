# Source: https://github.com/wavefrontshaping/complexPyTorch/issues/1
# Report: complex batch-norm layer updated its running mean/covariance from batch statistics without detaching, so host memory grew every epoch
# Shape: fixed as upstream: the same running-statistic updates wrapped in torch.no_grad(), so the buffers carry no history
# Expect: near-miss: must be silent
import torch
from torch import nn


class ComplexBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.weight = nn.Parameter(torch.ones(num_features, 3))
        self.bias = nn.Parameter(torch.zeros(num_features, 2))
        self.register_buffer("running_mean", torch.zeros(num_features, dtype=torch.complex64))
        self.register_buffer("running_covar", torch.zeros(num_features, 3))
        self.running_covar[:, 0] = 1.4142135623730951
        self.running_covar[:, 1] = 1.4142135623730951
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def _factor(self):
        self.num_batches_tracked += 1
        if self.momentum is None:
            return 1.0 / float(self.num_batches_tracked)
        return self.momentum

    def forward(self, inp):
        if self.training:
            f = self._factor()
            mean = inp.real.mean(dim=0).type(torch.complex64) + 1j * inp.imag.mean(dim=0).type(torch.complex64)
        else:
            f = 0.0
            mean = self.running_mean

        inp = inp - mean[None, ...]
        if self.training:
            n = inp.numel() / inp.size(1)
            crr = inp.real.var(dim=0, unbiased=False) + self.eps
            cii = inp.imag.var(dim=0, unbiased=False) + self.eps
            cri = (inp.real * inp.imag).mean(dim=0)
            with torch.no_grad():
                self.running_mean = f * mean + (1 - f) * self.running_mean
        else:
            crr = self.running_covar[:, 0] + self.eps
            cii = self.running_covar[:, 1] + self.eps
            cri = self.running_covar[:, 2]

        det = crr * cii - cri.pow(2)
        s = torch.sqrt(det)
        t = torch.sqrt(cii + crr + 2 * s)
        if self.training:
            with torch.no_grad():
                self.running_covar[:, 0] = f * crr * n / (n - 1) + (1 - f) * self.running_covar[:, 0]
                self.running_covar[:, 1] = f * cii * n / (n - 1) + (1 - f) * self.running_covar[:, 1]
        inv = 1.0 / (s * t)
        rrr, rii, rri = (cii + s) * inv, (crr + s) * inv, -cri * inv
        out_r = rrr[None, :] * inp.real + rri[None, :] * inp.imag
        out_i = rii[None, :] * inp.imag + rri[None, :] * inp.real
        out_r = self.weight[None, :, 0] * out_r + self.weight[None, :, 2] * out_i + self.bias[None, :, 0]
        out_i = self.weight[None, :, 2] * out_r + self.weight[None, :, 1] * out_i + self.bias[None, :, 1]
        return out_r.type(torch.complex64) + 1j * out_i.type(torch.complex64)
