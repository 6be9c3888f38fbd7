# Modelled on: https://github.com/google/brax/pull/152
# Report: a training example summed `total_loss += loss` over thousands of steps; the sum kept every step's graph alive.
import torch
import torch.nn as nn


def fit(model, loader, epochs=3, lr=1e-3):
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        total_loss = 0
        for inputs, targets in loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            total_loss += loss  # expect: TML001
        print(f"epoch {epoch}: {total_loss / len(loader)}")
