# Source: https://github.com/JStyborski/VESPR/blob/5f0397aa5fa91d62aeb4fa6e08d79b02a490adbe/Adversarial/FGSM_PGD.py
# Report: audit of a PGD-with-restarts attack used for robust evaluation: the repository re-detaches xAdv at the top of every step and steps from xAdv.data; this is the variant it avoids, where the adversarial input is made a grad leaf once and then rebound from itself every step
# Shape: x_adv.requires_grad_(True) once before the step loop, gradient via torch.autograd.grad, and the projected step rebinds x_adv from its attached previous value, so each step's clamp/add nodes (and their saved tensors) chain to all earlier steps of the restart
# Expect: TML005 line 38
import numpy as np
import torch
import torch.nn as nn


def clip_tens(t, norm, eps):
    if norm == np.inf:
        return torch.clamp(t, -eps, eps)
    dims = list(range(1, t.dim()))
    t_norm = torch.norm(t, p=norm, dim=dims, keepdim=True)
    return t * torch.clamp(eps / (t_norm + 1e-6), max=1.0)


def optimize_linear(grad, norm):
    if norm == np.inf:
        return grad.sign()
    dims = list(range(1, grad.dim()))
    return grad / torch.norm(grad, p=2, dim=dims, keepdim=True).clamp_min(1e-12)


def pgd_attack(model, loss_fn, x, y, alpha, eps, norm=np.inf, n_restarts=2, n_steps=20,
               x_min=0.0, x_max=1.0, targeted=False):
    """loss_fn must use reduction='none' so each sample keeps its own loss."""
    sign = -1.0 if targeted else 1.0
    best_loss, x_final = None, None
    for restart in range(n_restarts):
        noise = clip_tens(torch.empty_like(x).uniform_(-eps, eps), norm, eps)
        x_adv = torch.clamp(x + noise, x_min, x_max)
        x_adv.requires_grad_(True)
        for _ in range(n_steps):
            loss_val = sign * loss_fn(model(x_adv), y)
            grad, = torch.autograd.grad(loss_val.sum(), x_adv)
            eta = optimize_linear(grad, norm)
            x_adv = torch.clamp(x + clip_tens(x_adv + alpha * eta - x, norm, eps), x_min, x_max)  # expect: TML005
        if restart == 0:
            best_loss, x_final = loss_val.detach(), x_adv.detach()
        else:
            better = loss_val.detach() < best_loss if targeted else loss_val.detach() > best_loss
            best_loss[better] = loss_val[better].detach()
            x_final[better] = x_adv[better].detach()
    return best_loss.sum().item(), x_final


def robust_accuracy(model, loader, eps=8 / 255, alpha=2 / 255, device="cuda"):
    loss_fn = nn.CrossEntropyLoss(reduction="none")
    model.eval()
    correct, total, adv_loss = 0, 0, 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        batch_loss, x_adv = pgd_attack(model, loss_fn, x, y, alpha, eps)
        adv_loss += batch_loss
        with torch.no_grad():
            correct += (model(x_adv).argmax(dim=1) == y).sum().item()
        total += y.numel()
    return correct / total, adv_loss / total
