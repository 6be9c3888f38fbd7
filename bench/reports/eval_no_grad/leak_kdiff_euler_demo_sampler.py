# Source: https://github.com/crowsonkb/k-diffusion/blob/master/k_diffusion/sampling.py
# Report: k-diffusion's Euler sampler (Karras et al. Alg. 2) is decorated @torch.no_grad() and the trainer's demo() calls it on the EMA model; this variant ports the sampler and demo without the decorators
# Shape: denoised = model(x, ...) is graph-attached, d = to_d(x, sigma, denoised) and x = x + d * dt carry the graph into the next step, so the sampler chains all n_steps U-Net graphs before returning
# Expect: TML005 line 39
import math

import torch
from torch import nn


def append_dims(x, target_dims):
    dims_to_append = target_dims - x.ndim
    return x[(...,) + (None,) * dims_to_append]


def get_sigmas_karras(n, sigma_min, sigma_max, rho=7.0, device="cpu"):
    ramp = torch.linspace(0, 1, n, device=device)
    min_inv_rho = sigma_min ** (1 / rho)
    max_inv_rho = sigma_max ** (1 / rho)
    sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    return torch.cat([sigmas, sigmas.new_zeros([1])])


def to_d(x, sigma, denoised):
    """Converts a denoiser output to a Karras ODE derivative."""
    return (x - denoised) / append_dims(sigma, x.ndim)


def sample_euler(model, x, sigmas, extra_args=None, callback=None):
    extra_args = {} if extra_args is None else extra_args
    s_in = x.new_ones([x.shape[0]])
    for i in range(len(sigmas) - 1):
        sigma = sigmas[i]
        denoised = model(x, sigma * s_in, **extra_args)
        d = to_d(x, sigma, denoised)
        if callback is not None:
            callback({"x": x, "i": i, "sigma": sigma, "denoised": denoised})
        dt = sigmas[i + 1] - sigma
        x = x + d * dt  # expect: TML005
    return x


class Trainer:
    def __init__(self, model, model_ema, sample_density, opt, ema_decay=0.999, n_demo=64, n_steps=50):
        self.model = model
        self.model_ema = model_ema
        self.sample_density = sample_density
        self.opt = opt
        self.ema_decay = ema_decay
        self.n_demo = n_demo
        self.n_steps = n_steps

    @torch.no_grad()
    def ema_update(self):
        for p_ema, p in zip(self.model_ema.parameters(), self.model.parameters()):
            p_ema.lerp_(p, 1 - self.ema_decay)

    def demo(self, shape, sigma_min, sigma_max, device):
        x = torch.randn([self.n_demo, *shape], device=device) * sigma_max
        sigmas = get_sigmas_karras(self.n_steps, sigma_min, sigma_max, device=device)
        x_0 = sample_euler(self.model_ema, x, sigmas)
        return x_0.clamp(-1, 1)

    def train(self, loader, loss_fn, device, demo_every=500):
        step = 0
        for reals in loader:
            reals = reals.to(device)
            self.opt.zero_grad()
            noise = torch.randn_like(reals)
            sigma = self.sample_density([reals.shape[0]], device=device)
            loss = loss_fn(self.model, reals, noise, sigma).mean()
            loss.backward()
            self.opt.step()
            self.ema_update()
            if step % demo_every == 0:
                grid = self.demo(reals.shape[1:], 0.01, 80.0, device)
                print(step, loss.item(), grid.shape, math.prod(grid.shape))
            step += 1
