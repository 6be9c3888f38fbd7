# Modelled on: https://openillumi.com/?p=84273
# Report: aggregating DataLoader output by starting from torch.empty((0, D)) and concatenating every batch; a list plus one cat was over 10x faster.
import torch

FEATURE_DIM = 128


def gather(loader):
    all_data = torch.empty((0, FEATURE_DIM), dtype=torch.float32)
    for batch in loader:
        all_data = torch.cat([all_data, batch], dim=0)  # expect: TML008
    return all_data
