# Source: https://github.com/LostOxygen/poison_froggo/issues/1
# Report: CUDA memory kept growing while creating a perturbed (poisoned) dataset; each step's image came back from a forward_step helper, and the maintainer pointed at gradient trees copied over and over into new variables.
# Shape: the helper returns img - lr * grad built from the image it was given (which requires grad); the caller rebinds its image from the helper's result every iteration, so each step's graph links to the previous one.
# Expect: TML005 line 25
import torch
import torch.nn as nn


def forward_step(model: nn.Module, img: torch.Tensor, target_logits: torch.Tensor, lr: float) -> torch.Tensor:
    img.requires_grad_(True)
    loss = torch.norm(model(img) - target_logits)
    grad, = torch.autograd.grad(loss, img)
    return img - lr * grad


def backward_step(img, base_img, lr, beta):
    return (img + lr * beta * base_img) / (1 + beta * lr)


def poison_one(model, base_img, target_img, iterations=1000, lr=0.01, beta=0.25):
    with torch.no_grad():
        target_logits = model(target_img)
    img = base_img.clone()
    for _ in range(iterations):
        img = forward_step(model, img, target_logits, lr)  # expect: TML005
        img = backward_step(img, base_img, lr, beta)
    return img
