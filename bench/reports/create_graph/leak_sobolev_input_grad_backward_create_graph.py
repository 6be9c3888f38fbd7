# Source: https://github.com/pytorch/pytorch/issues/7343
# Report: memory_allocated stays higher after `y.backward(torch.ones_like(y), create_graph=True)` on y = x.tanh() even after deleting x and y; apaszke explained the reference cycle x -> x.grad -> x.grad.grad_fn -> x, and colesbury suggested using torch.autograd.grad instead of Tensor.backward().
# Shape: a Sobolev-style training step differentiates the network output w.r.t. a fresh requires_grad input batch with backward(create_graph=True) and reads x.grad; x.grad is never reset to None, so every batch leaves an uncollectable x/x.grad/grad_fn cycle (with its activations) behind.
# Expect: TML013 line 31
import torch
import torch.nn as nn


class TanhMLP(nn.Module):
    def __init__(self, in_dim=3, hidden=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x)


def train_sobolev(model, loader, optimizer, epochs=100, lam=0.1, device="cuda"):
    mse = nn.MSELoss()
    model.to(device).train()
    for epoch in range(epochs):
        running = 0.0
        for x, y, dy in loader:
            x = x.to(device).requires_grad_(True)
            y, dy = y.to(device), dy.to(device)
            pred = model(x)
            pred.backward(torch.ones_like(pred), create_graph=True)  # expect: TML013
            loss = mse(pred, y) + lam * mse(x.grad, dy)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: loss {running / len(loader):.5f}")
