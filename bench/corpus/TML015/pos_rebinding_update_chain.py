# Modelled on: https://github.com/zhangyu2234/Deep-learning-by-hand
# Report: a from-scratch network hit "Trying to backward through the graph a second time" because its parameters were updated with tracked operations.
import torch


def fc(x, W, b):
    return torch.relu(x @ W + b)


def train(X, Y, num_epochs=20, lr=0.01):
    W = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for epoch in range(num_epochs):
        l = ((fc(X, W, b) - Y) ** 2).mean()
        l.backward()
        W = W - lr * W.grad  # expect: TML005, TML015
        b = b - lr * b.grad  # expect: TML005, TML015
    return W, b
