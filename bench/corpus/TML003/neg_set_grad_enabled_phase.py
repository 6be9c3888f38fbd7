# Modelled on: https://github.com/facebookarchive/loop/issues/57
# Report: near-miss: a shared train/val loop uses torch.set_grad_enabled(phase == "train") around the forward pass.
import torch


def run_epoch(model, loaders, criterion, optimizer):
    for phase in ["train", "val"]:
        if phase == "train":
            model.train()
        else:
            model.eval()
        for inputs, labels in loaders[phase]:
            optimizer.zero_grad()
            with torch.set_grad_enabled(phase == "train"):
                outputs = model(inputs)
                loss = criterion(outputs, labels)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
