# Source: https://github.com/LostOxygen/poison_froggo/issues/1
# Report: the reporter's change detaches the image at the start of forward_step (img.detach_()) and builds the perturbed image from gradient data only; memory no longer grows.
# Shape: same helper/caller split; the helper returns a tensor with no history.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def forward_step(model: nn.Module, img: torch.Tensor, target_logits: torch.Tensor, lr: float) -> torch.Tensor:
    img = img.detach().requires_grad_(True)
    loss = torch.norm(model(img) - target_logits)
    grad, = torch.autograd.grad(loss, img)
    return (img - lr * grad).detach()


def backward_step(img, base_img, lr, beta):
    return (img + lr * beta * base_img) / (1 + beta * lr)


def poison_one(model, base_img, target_img, iterations=1000, lr=0.01, beta=0.25):
    with torch.no_grad():
        target_logits = model(target_img)
    img = base_img.clone()
    for _ in range(iterations):
        img = forward_step(model, img, target_logits, lr)
        img = backward_step(img, base_img, lr, beta)
    return img
