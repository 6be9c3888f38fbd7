# Modelled on: https://github.com/facebookresearch/fairchem/pull/199
# Report: near-miss: the evaluation helper itself has no context, but its only call site is already under torch.no_grad().
import torch


def evaluate(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += (model(x) - y).abs().mean().item()
    return total / len(loader)


def main(model, train_loader, val_loader, optimizer, epochs=10):
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            (model(x) - y).pow(2).mean().backward()
            optimizer.step()
        with torch.no_grad():
            mae = evaluate(model, val_loader)
        print(epoch, mae)
