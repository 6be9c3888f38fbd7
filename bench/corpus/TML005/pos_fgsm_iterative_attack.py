# Modelled on: https://github.com/BorealisAI/advertorch/pull/68
# Report: the attack returned adversarials without detach(), so PyTorch kept the graph and memory stayed high after the attack.
import torch
import torch.nn.functional as F


def pgd_attack(model, x, y, eps=8 / 255, alpha=2 / 255, steps=10):
    x_adv = x.clone().requires_grad_(True)
    for _ in range(steps):
        loss = F.cross_entropy(model(x_adv), y)
        grad, = torch.autograd.grad(loss, x_adv)
        x_adv = torch.min(torch.max(x_adv + alpha * grad.sign(), x - eps), x + eps).clamp(0, 1)  # expect: TML005
    return x_adv
