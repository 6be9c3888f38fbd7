# Modelled on: https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232/2
# Report: a user called torch.cuda.empty_cache() after processing each batch; the answer: it should not be used by end users, it makes GPU code much slower.
import torch


def train_epoch(model, loader, optimizer, criterion):
    model.train()
    for inputs, targets in loader:
        inputs, targets = inputs.cuda(), targets.cuda()
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        del inputs, targets, loss
        torch.cuda.empty_cache()  # expect: TML009
