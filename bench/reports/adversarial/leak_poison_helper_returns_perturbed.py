# Source: https://github.com/LostOxygen/poison_froggo/issues/1
# Report: CUDA memory kept growing while creating a perturbed (poisoned) dataset; each step's image came back from a forward_step helper, and the maintainer pointed at gradient trees copied over and over into new variables.
# Shape: the helper returns img - lr * grad built from an image that requires grad; the caller rebinds its image from the helper's result every iteration.
# Expect: TML005 line 28
import torch
import torch.nn as nn


def forward_step(model: nn.Module, img: torch.Tensor, target_logits: torch.Tensor, lr: float) -> torch.Tensor:
    img.requires_grad_(True)
    img.retain_grad()
    logits = model(img)
    loss = torch.norm(logits - target_logits)
    model.zero_grad()
    loss.backward()
    return img - lr * img.grad


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
