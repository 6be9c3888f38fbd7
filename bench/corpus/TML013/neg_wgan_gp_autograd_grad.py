# Modelled on: https://github.com/pytorch/pytorch/issues/7343
# Report: the recommended form: torch.autograd.grad(create_graph=True) for the penalty, never stored in .grad.
import torch


def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    grads, = torch.autograd.grad(D(mixed).sum(), mixed, create_graph=True)
    return ((grads.flatten(1).norm(dim=1) - 1) ** 2).mean()


def train_d(D, G, loader, opt_D, z_dim, lam=10.0):
    for real in loader:
        fake = G(torch.randn(real.size(0), z_dim, device=real.device)).detach()
        opt_D.zero_grad()
        loss = D(fake).mean() - D(real).mean() + lam * gradient_penalty(D, real, fake)
        loss.backward()
        opt_D.step()
