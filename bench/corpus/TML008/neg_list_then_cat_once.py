# Modelled on: https://openillumi.com/?p=84273
# Report: the recommended pattern: keep the batches in a list and call torch.cat once at the end.
import torch


def gather(loader):
    chunks = []
    for batch in loader:
        chunks.append(batch)
    return torch.cat(chunks, dim=0)
