# Source: https://github.com/mahyarnajibi/FreeAdversarialTraining/issues/10
# Report: the free-AT update of the global noise is meant to be a plain tensor update between replays, not part of the graph.
# Shape: same persistent noise (a plain tensor); each replay takes a fresh leaf copy, and the noise is updated in place under torch.no_grad().
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def train_free(model, loader, epochs, replays=4, eps=8 / 255, device="cuda"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    noise = torch.zeros(128, 3, 32, 32, device=device)
    for epoch in range(epochs):
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            for _ in range(replays):
                noise_batch = noise[: images.size(0)].clone().requires_grad_(True)
                loss = criterion(model(torch.clamp(images + noise_batch, 0, 1)), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                with torch.no_grad():
                    noise[: images.size(0)] += eps * noise_batch.grad.sign()
                    noise.clamp_(-eps, eps)
