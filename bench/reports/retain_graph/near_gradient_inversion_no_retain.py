# Source: https://github.com/Koukyosyumei/AIJack/issues/133
# Report: the patch (#136) drops retain_graph=True; memory stays flat during the attack.
# Shape: same helper-returned distance; plain backward, and only floats are kept.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def gradient_distance(model, criterion, dummy_x, dummy_y, received_grads):
    loss = criterion(model(dummy_x), dummy_y.softmax(dim=-1))
    dummy_grads = torch.autograd.grad(loss, model.parameters(), create_graph=True)
    return sum(((dg - rg) ** 2).sum() for dg, rg in zip(dummy_grads, received_grads))


def reconstruct(model, received_grads, shape, num_classes, steps=300):
    criterion = nn.CrossEntropyLoss()
    dummy_x = torch.randn(shape, device="cuda", requires_grad=True)
    dummy_y = torch.randn(shape[0], num_classes, device="cuda", requires_grad=True)
    optimizer = torch.optim.Adam([dummy_x, dummy_y], lr=0.1)
    history = []
    for step in range(steps):
        optimizer.zero_grad()
        distance = gradient_distance(model, criterion, dummy_x, dummy_y, received_grads)
        distance.backward()
        optimizer.step()
        history.append(distance.item())
    return dummy_x.detach(), dummy_y.detach(), history
