# Source: https://github.com/pytorch/pytorch/issues/4661
# Report: a user captured gradients with a hook registered at the embedding layer and stored them in a list while training; GPU memory leaked step after step.
# Shape: a helper installs a gradient hook on every parameter that appends the gradient to a module-level list; the training loop calls the helper once per batch.
# Expect: TML007 line 13
import torch
import torch.nn as nn

captured_grads = []


def watch_gradients(model: nn.Module):
    for name, param in model.named_parameters():
        param.register_hook(lambda grad, name=name: captured_grads.append((name, grad)))  # expect: TML007


def train(model, loader, epochs=3):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(epochs):
        for tokens, labels in loader:
            watch_gradients(model)
            loss = nn.functional.cross_entropy(model(tokens), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
