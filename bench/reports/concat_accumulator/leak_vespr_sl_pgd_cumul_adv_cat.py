# Source: https://github.com/JStyborski/VESPR/blob/5f0397aa5fa91d62aeb4fa6e08d79b02a490adbe/Adversarial/FGSM_PGD.py
# Report: audit of sl_pgd: the attack walks the dataset in mini-batches and grows the returned adversarial set with torch.cat((cumulAdvTens, xAdvFinal.detach()), dim=0) on every batch, re-copying everything produced so far
# Shape: attack_dataset() wraps X, Y in a TensorDataset/DataLoader, attacks each batch with a per-step-detached PGD, and concatenates the batch onto the running tensor inside the batch loop; the loss total is kept as a Python float
# Expect: TML008 line 42
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
    cumul_adv = None
    for i, (x, y) in enumerate(loader):
        batch_loss, x_adv = pgd_batch(model, loss_fn, x, y, alpha, eps, norm, n_steps, x_min, x_max)
        total_loss += batch_loss.sum().item()
        if i == 0:
            cumul_adv = x_adv
        else:
            cumul_adv = torch.cat((cumul_adv, x_adv), dim=0)  # expect: TML008
    return total_loss / len(X), cumul_adv


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
