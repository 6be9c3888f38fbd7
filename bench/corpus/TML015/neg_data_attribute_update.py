# Modelled on: https://mlkatas.com/kata/23
# Report: near-miss: old-style updates through .data bypass autograd (no error, no graph).
import torch


def train(model, loader, lr=0.01):
    for x, y in loader:
        model.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        for p in model.parameters():
            p.data -= lr * p.grad.data
