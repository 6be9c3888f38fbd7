# Source: https://github.com/pytorch/pytorch/issues/7261
# Report: fixed spectral_norm from pytorch#7298: the power iteration that updates the cached u runs under torch.no_grad(), so u never carries a graph; only sigma is differentiated
# Shape: same wrapper keeping u on self and rebinding it in forward, but u and v come out of a with torch.no_grad() block
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import nn


class SpectralNorm(nn.Module):
    def __init__(self, module, name="weight", n_power_iterations=1, eps=1e-12):
        super().__init__()
        self.module = module
        self.name = name
        self.n_power_iterations = n_power_iterations
        self.eps = eps
        weight = getattr(module, name)
        height = weight.size(0)
        self.weight_u = F.normalize(weight.new_empty(height).normal_(0, 1), dim=0, eps=eps)
        del module._parameters[name]
        module.register_parameter(name + "_orig", nn.Parameter(weight.data))

    def compute_weight(self):
        weight = getattr(self.module, self.name + "_orig")
        weight_mat = weight.view(weight.size(0), -1)
        with torch.no_grad():
            u = self.weight_u
            for _ in range(self.n_power_iterations):
                # u and v approximate the first left / right singular vectors of W
                v = F.normalize(torch.matmul(weight_mat.t(), u), dim=0, eps=self.eps)
                u = F.normalize(torch.matmul(weight_mat, v), dim=0, eps=self.eps)
        sigma = torch.dot(u, torch.matmul(weight_mat, v))
        return weight / sigma, u

    def forward(self, *args):
        weight, u = self.compute_weight()
        setattr(self.module, self.name, weight)
        self.weight_u = u
        return self.module(*args)


class Discriminator(nn.Module):
    def __init__(self, ch=64):
        super().__init__()
        self.net = nn.Sequential(
            SpectralNorm(nn.Conv2d(3, ch, 4, 2, 1)), nn.LeakyReLU(0.1),
            SpectralNorm(nn.Conv2d(ch, ch * 2, 4, 2, 1)), nn.LeakyReLU(0.1),
            SpectralNorm(nn.Conv2d(ch * 2, ch * 4, 4, 2, 1)), nn.LeakyReLU(0.1),
            nn.Flatten(), SpectralNorm(nn.Linear(ch * 4 * 4 * 4, 1)),
        )

    def forward(self, x):
        return self.net(x)
