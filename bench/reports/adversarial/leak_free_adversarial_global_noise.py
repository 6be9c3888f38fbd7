# Source: https://github.com/mahyarnajibi/FreeAdversarialTraining/issues/10
# Report: a memory leak was traced to the gradient computation of the noise_batch tensor that "free" adversarial training carries across minibatch replays.
# Shape: the persistent noise is created with requires_grad=True and rebound out of place from itself plus the sign of the replay noise's gradient; each replay's update links to the previous one (the consumer only reads it detached).
# Expect: TML005 line 24
import torch
import torch.nn as nn


def train_free(model, loader, epochs, replays=4, eps=8 / 255, device="cuda"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    noise = torch.zeros(128, 3, 32, 32, device=device, requires_grad=True)
    for epoch in range(epochs):
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            for _ in range(replays):
                noise_batch = noise.detach()[: images.size(0)].requires_grad_(True)
                loss = criterion(model(torch.clamp(images + noise_batch, 0, 1)), labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                step = torch.zeros_like(noise)
                step[: images.size(0)] = eps * noise_batch.grad.sign()
                noise = torch.clamp(noise + step, -eps, eps)  # expect: TML005
