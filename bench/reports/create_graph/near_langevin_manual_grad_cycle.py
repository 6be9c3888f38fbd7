# Source: https://github.com/devzhk/InverseBench/pull/22
# Report: (fixed version) CUDA memory leaked across DAPS Langevin calls; the manual gradient written into x.grad was built from the requires_grad leaf x (anchor term), so x.grad kept a grad_fn pointing back at x (reference cycle), and x.grad was never cleared on return
# Shape: same sampler, but the hand-built gradient is detached before it is written to x.grad, and x.grad is reset to None on both return paths
# Expect: near-miss: must be silent
import math

import torch


class BlurOperator:
    def __init__(self, kernel, device):
        self.kernel = kernel.to(device)
        self.device = device

    def forward(self, x):
        return torch.nn.functional.conv2d(x, self.kernel, padding=self.kernel.shape[-1] // 2, groups=x.shape[1])

    def gradient(self, x, measurement):
        x_in = x.detach().requires_grad_(True)
        residual = (self.forward(x_in) - measurement).pow(2).sum()
        return torch.autograd.grad(residual, x_in)[0]


class LangevinSampler:
    def __init__(self, num_steps, lr, tau=0.01):
        self.num_steps = num_steps
        self.lr = lr
        self.tau = tau

    def sample(self, x0hat, operator, measurement, sigma):
        x0hat = x0hat.detach()
        x = x0hat.clone().requires_grad_(True)
        optimizer = torch.optim.SGD([x], lr=self.lr)
        for _ in range(self.num_steps):
            optimizer.zero_grad()
            grad = operator.gradient(x, measurement) / (2 * self.tau ** 2)
            grad = grad + (x - x0hat) / sigma ** 2
            x.grad = grad.detach()
            optimizer.step()
            with torch.no_grad():
                x.add_(math.sqrt(2 * self.lr) * torch.randn_like(x))
            if torch.isnan(x).any():
                x.grad = None
                return torch.zeros_like(x)
        out = x.detach()
        x.grad = None
        return out


def solve(denoiser, operator, measurement, sigmas, sampler):
    xt = torch.randn_like(measurement) * sigmas[0]
    for i, sigma in enumerate(sigmas[:-1]):
        with torch.no_grad():
            x0hat = denoiser(xt, sigma)
        x0y = sampler.sample(x0hat, operator, measurement, sigma)
        xt = x0y + torch.randn_like(x0y) * sigmas[i + 1]
    return xt
