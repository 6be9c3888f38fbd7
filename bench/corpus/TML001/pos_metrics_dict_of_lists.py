# Modelled on: https://github.com/facebookresearch/mmf/pull/560
# Report: the per-step loss dict was merged into a meter dict with the tensors (and their graphs) still attached, causing GPU and CPU OOM.
from collections import defaultdict

import torch


def train(model, loader, optimizer, criterion, device="cuda"):
    history = defaultdict(list)
    model.train()
    for step, (images, labels) in enumerate(loader):
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        ce = criterion(logits, labels)
        reg = 1e-4 * sum(p.pow(2).sum() for p in model.parameters())
        loss = ce + reg
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history["ce"].append(ce)  # expect: TML001
        history["total"].append(loss.item())
    return history
