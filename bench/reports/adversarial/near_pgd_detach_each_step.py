# Source: https://github.com/BorealisAI/advertorch/pull/73
# Report: the fixed attack runs its bookkeeping forward passes under torch.no_grad(); the iterate itself is a fresh leaf each step.
# Shape: PGD iterate rebound from itself every step, but through .detach() and requires_grad_() on each step, and scoring under no_grad.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def pgd(model, x, labels, eps=8 / 255, alpha=2 / 255, steps=40):
    x_adv = (x + torch.empty_like(x).uniform_(-eps, eps)).clamp(0, 1).detach()
    best = x_adv.clone()
    best_loss = torch.full((x.shape[0],), -1e9, device=x.device)
    for _ in range(steps):
        x_adv.requires_grad_(True)
        loss = F.cross_entropy(model(x_adv), labels)
        grad, = torch.autograd.grad(loss, x_adv)
        x_adv = x_adv.detach() + alpha * grad.sign()
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)
        with torch.no_grad():
            per_example = F.cross_entropy(model(x_adv), labels, reduction="none")
            improved = per_example > best_loss
            best[improved] = x_adv[improved]
            best_loss = torch.where(improved, per_example, best_loss)
    return best
