# Source: https://github.com/Koukyosyumei/AIJack/issues/133
# Report: a gradient-inversion attack ran out of GPU memory; retain_graph=True on the backward inside the reconstruction loop kept PyTorch from freeing memory.
# Shape: the only backward of each reconstruction step retains its graph, and the distance it backpropagates is returned by a helper; the dummy data carries across steps.
# Expect: TML006 line 24; TML001 line 26
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
        distance.backward(retain_graph=True)  # expect: TML006
        optimizer.step()
        history.append(distance)  # expect: TML001
    return dummy_x.detach(), dummy_y.detach(), history
