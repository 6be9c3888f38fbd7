# Source: https://github.com/JStyborski/VESPR/blob/5f0397aa5fa91d62aeb4fa6e08d79b02a490adbe/Adversarial/FGSM_PGD.py
# Report: audit of sl_pgd (the variant it should have used): instead of growing the adversarial set with torch.cat on every batch, the output is allocated once and each batch is written into its slice
# Shape: same attack_dataset(); adv_out = torch.empty_like(X) before the loop and adv_out[start:start + n] = x_adv per batch, so there is no per-batch concatenation and no list of device tensors; the loss total stays a Python float
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def project(delta, norm, eps):
    if norm == np.inf:
        return delta.clamp(-eps, eps)
    n = delta.flatten(1).norm(p=norm, dim=1).view(-1, *[1] * (delta.dim() - 1))
    return delta * torch.clamp(eps / (n + 1e-6), max=1.0)


def pgd_batch(model, loss_fn, x, y, alpha, eps, norm, n_steps, x_min, x_max):
    x_adv = torch.clamp(x + project(torch.empty_like(x).uniform_(-eps, eps), norm, eps), x_min, x_max)
    for _ in range(n_steps):
        x_adv = x_adv.detach().requires_grad_(True)
        loss_val = loss_fn(model(x_adv), y)
        grad, = torch.autograd.grad(loss_val.sum(), x_adv)
        step = grad.sign() if norm == np.inf else grad / grad.flatten(1).norm(dim=1).view(-1, 1, 1, 1)
        x_adv = torch.clamp(x + project(x_adv.detach() + alpha * step - x, norm, eps), x_min, x_max)
    return loss_val.detach(), x_adv.detach()


def attack_dataset(model, X, Y, alpha=2 / 255, eps=8 / 255, norm=np.inf, n_steps=10,
                   batch_size=256, x_min=0.0, x_max=1.0):
    """X and Y already live on the model's device."""
    loader = DataLoader(TensorDataset(X, Y), batch_size=batch_size, shuffle=False)
    loss_fn = nn.CrossEntropyLoss(reduction="none")
    total_loss = 0.0
    adv_out = torch.empty_like(X)
    start = 0
    for x, y in loader:
        batch_loss, x_adv = pgd_batch(model, loss_fn, x, y, alpha, eps, norm, n_steps, x_min, x_max)
        total_loss += batch_loss.sum().item()
        adv_out[start:start + x.size(0)] = x_adv
        start += x.size(0)
    return total_loss / len(X), adv_out


def adversarial_finetune_epoch(model, optimizer, X, Y, device="cuda"):
    model.eval()
    _, X_adv = attack_dataset(model, X.to(device), Y.to(device))
    model.train()
    perm = torch.randperm(len(X_adv), device=X_adv.device)
    running = 0.0
    for start in range(0, len(perm), 128):
        idx = perm[start:start + 128]
        loss = nn.functional.cross_entropy(model(X_adv[idx]), Y.to(device)[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running
