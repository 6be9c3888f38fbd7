# Modelled on: https://github.com/facebookarchive/loop/issues/57
# Report: near-miss: a shared train/val loop uses torch.set_grad_enabled(phase == "train") around the forward pass.
import torch


def run_phase(model, batches, criterion, optimizer, training: bool):
    model.train(training)
    totals = {"loss": 0.0, "frames": 0}
    with torch.set_grad_enabled(training):
        for features, targets in batches:
            predicted = model(features)
            loss = criterion(predicted, targets)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            totals["loss"] += loss.item() * targets.shape[0]
            totals["frames"] += targets.shape[0]
    return totals["loss"] / max(totals["frames"], 1)


def fit(model, train_batches, valid_batches, criterion, optimizer, epochs):
    history = []
    for epoch in range(epochs):
        history.append((run_phase(model, train_batches, criterion, optimizer, training=True),
                        run_phase(model, valid_batches, criterion, optimizer, training=False)))
    return history
