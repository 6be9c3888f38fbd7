# Modelled on: https://github.com/BorealisAI/advertorch/pull/68
# Report: the fixed attack detaches the adversarial input at every step and returns it detached.
import torch
import torch.nn.functional as F


def pgd_attack(model, x, y, eps=8 / 255, alpha=2 / 255, steps=10):
    x_adv = x.clone().detach()
    for _ in range(steps):
        x_adv.requires_grad_(True)
        loss = F.cross_entropy(model(x_adv), y)
        grad, = torch.autograd.grad(loss, x_adv)
        x_adv = x_adv.detach() + alpha * grad.sign()
        x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(0, 1)
    return x_adv.detach()
