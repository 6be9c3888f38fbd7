# Source: https://github.com/BorealisAI/advertorch/pull/73
# Report: the EAD attack's forward pass inside its iterations created the graph again and again; over 1000 iterations this ran CUDA out of memory, fixed by wrapping it in torch.no_grad().
# Shape: the attack's two iterates are rebound from each other every step (FISTA momentum), both built from graph-carrying gradient steps.
# Expect: TML005 line 21
import torch
import torch.nn.functional as F


def shrink(z, x, beta):
    return torch.where(z - x > beta, torch.clamp(z - beta, max=1.0), torch.where(z - x < -beta, torch.clamp(z + beta, min=0.0), x))


def ead_attack(model, x, labels, steps=1000, lr=0.01, beta=1e-3, c=1.0):
    x_k = x.clone()
    y_k = x.clone().requires_grad_(True)
    for k in range(steps):
        logits = model(y_k)
        loss = c * F.cross_entropy(logits, labels) + ((y_k - x) ** 2).sum()
        grad, = torch.autograd.grad(-loss, y_k, create_graph=False)
        x_next = shrink(y_k - lr * grad, x, beta)
        y_k = x_next + k / (k + 3) * (x_next - x_k)  # expect: TML005
        x_k = x_next
    return x_k.detach()
