# Modelled on: https://github.com/BorealisAI/advertorch/issues/113
# Report: the suggestion from the thread: torch.autograd.grad(loss, x) computes only the input gradient.
import torch
import torch.nn.functional as F


def fgsm(model, x, y, eps=0.03):
    x_adv = x.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(model(x_adv), y)
    grad, = torch.autograd.grad(loss, x_adv)
    return (x_adv + eps * grad.sign()).clamp(0, 1).detach()
