# Modelled on: https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232/2
# Report: near-miss: "because you get an OOM error, this function is actually called internally"; here it runs only on the OOM recovery path, not every step.
import torch


def train_epoch(model, loader, optimizer, criterion):
    skipped = 0
    for x, y in loader:
        try:
            optimizer.zero_grad()
            criterion(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        except torch.cuda.OutOfMemoryError:
            optimizer.zero_grad(set_to_none=True)
            torch.cuda.empty_cache()
            skipped += 1
    return skipped
