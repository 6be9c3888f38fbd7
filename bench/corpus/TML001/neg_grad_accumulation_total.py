# Modelled on: https://github.com/pytorch/pytorch/issues/17568
# Report: a running loss summed over a few micro-batches and then backpropagated once is gradient accumulation, not a leak (the name is rebound after backward).
import torch


def train(model, loader, optimizer, criterion, accum=4):
    total = 0
    for i, (x, y) in enumerate(loader):
        total = total + criterion(model(x), y) / accum
        if (i + 1) % accum == 0:
            optimizer.zero_grad()
            total.backward()
            optimizer.step()
            total = 0
