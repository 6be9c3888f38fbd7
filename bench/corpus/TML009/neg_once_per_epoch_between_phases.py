# Modelled on: https://discuss.pytorch.org/t/about-torch-cuda-empty-cache/34232/2
# Report: near-miss: releasing the cache once between training and a memory-hungry evaluation, outside the per-batch loop.
import torch


def train_epoch(model, loader, optimizer, criterion):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x.cuda()), y.cuda()).backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    return sum(model(x.cuda()).argmax(1).eq(y.cuda()).sum().item() for x, y in loader)


def fit(model, train_loader, val_loader, optimizer, criterion):
    train_epoch(model, train_loader, optimizer, criterion)
    torch.cuda.empty_cache()
    return evaluate(model, val_loader)
