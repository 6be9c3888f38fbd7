# Source: https://github.com/lxuechen/BDMC/pull/3
# Report: in the AIS evaluator, log_f_i has a gradient and is accumulated into logw, so the model's backward storage keeps piling up and causes a GPU out-of-memory error; the maintainer answered that only grad_U needs gradients and wrapped just that block in torch.enable_grad.
# Shape: the whole trajectory runs under @torch.no_grad(); only grad_U re-enables autograd on a fresh leaf copy of z and returns a plain gradient, so the in-place log-weight accumulation only ever adds graph-free tensors.
# Expect: near-miss: must be silent
import numpy as np
import torch

from hmc import accept_reject, hmc_trajectory
from utils import log_bernoulli, log_mean_exp, log_normal


@torch.no_grad()
def ais_trajectory(model, loader, schedule=np.linspace(0.0, 1.0, 500), n_sample=100):
    z_size = model.hps.z_size
    device = next(model.parameters()).device
    logws = []

    for batch, _ in loader:
        B = batch.size(0) * n_sample
        batch = batch.to(device).repeat(n_sample, 1)
        epsilon = torch.full((B,), 0.01, device=device)
        accept_hist = torch.zeros(B, device=device)
        logw = torch.zeros(B, device=device)
        current_z = torch.randn(B, z_size, device=device)

        def log_f_i(z, t):
            zeros = torch.zeros(B, z_size, device=device)
            log_prior = log_normal(z, zeros, zeros)
            log_likelihood = log_bernoulli(model.decode(z), batch)
            return log_prior + log_likelihood * t

        for j, (t0, t1) in enumerate(zip(schedule[:-1], schedule[1:]), 1):
            log_int_1 = log_f_i(current_z, t0)
            log_int_2 = log_f_i(current_z, t1)
            logw.add_(log_int_2 - log_int_1)

            current_v = torch.randn_like(current_z)

            def U(z, t=t1):
                return -log_f_i(z, t)

            def grad_U(z, t=t1):
                with torch.enable_grad():
                    z = z.detach().requires_grad_(True)
                    grad = torch.autograd.grad(U(z, t).sum(), z)[0]
                return grad.clamp(-B * z_size * 100, B * z_size * 100)

            def kinetic(v):
                zeros = torch.zeros_like(v)
                return -log_normal(v, zeros, zeros)

            z, v = hmc_trajectory(current_z, current_v, U, grad_U, epsilon)
            current_z, epsilon, accept_hist = accept_reject(
                current_z, current_v, z, v, epsilon, accept_hist, j, U, K=kinetic)

        logw = log_mean_exp(logw.view(n_sample, -1).transpose(0, 1))
        logws.append(logw.cpu())
        print(f"batch done, mean log weight {logw.mean().item():.4f}")
    return logws
