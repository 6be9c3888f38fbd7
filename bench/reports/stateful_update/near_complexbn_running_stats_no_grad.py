# Source: https://github.com/wavefrontshaping/complexPyTorch/pull/23
# Report: PR fixing a memory leak in ComplexBatchNorm1d by wrapping the running-statistics updates in torch.no_grad(), which was missing.
# Shape: fixed variant: self.running_mean / self.running_covar are still reassigned from the batch statistics every training step, but inside `with torch.no_grad()`, so the stored state never joins the autograd graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class ComplexBatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.register_buffer("running_mean", torch.zeros(num_features, dtype=torch.complex64))
        self.register_buffer("running_covar", torch.zeros(num_features, 3))
        self.running_covar[:, 0] = 1.4142135623730951
        self.running_covar[:, 1] = 1.4142135623730951

    def forward(self, inp):
        f = self.momentum
        if self.training:
            mean = inp.real.mean(dim=0).type(torch.complex64) + 1j * inp.imag.mean(dim=0).type(torch.complex64)
            with torch.no_grad():
                self.running_mean = f * mean + (1 - f) * self.running_mean
        else:
            mean = self.running_mean
        inp = inp - mean[None, ...]

        if self.training:
            n = inp.numel() / inp.size(1)
            Crr = inp.real.var(dim=0, unbiased=False) + self.eps
            Cii = inp.imag.var(dim=0, unbiased=False) + self.eps
            Cri = (inp.real * inp.imag).mean(dim=0)
            with torch.no_grad():
                self.running_covar[:, 0] = f * Crr * n / (n - 1) + (1 - f) * self.running_covar[:, 0]
                self.running_covar[:, 1] = f * Cii * n / (n - 1) + (1 - f) * self.running_covar[:, 1]
                self.running_covar[:, 2] = f * Cri * n / (n - 1) + (1 - f) * self.running_covar[:, 2]
        else:
            Crr = self.running_covar[:, 0] + self.eps
            Cii = self.running_covar[:, 1] + self.eps
            Cri = self.running_covar[:, 2]

        s = torch.sqrt(Crr * Cii - Cri.pow(2))
        inverse_st = 1.0 / (s * torch.sqrt(Cii + Crr + 2 * s))
        Rrr, Rii, Rri = (Cii + s) * inverse_st, (Crr + s) * inverse_st, -Cri * inverse_st
        real = Rrr[None, :] * inp.real + Rri[None, :] * inp.imag
        imag = Rii[None, :] * inp.imag + Rri[None, :] * inp.real
        return real.type(torch.complex64) + 1j * imag.type(torch.complex64)
