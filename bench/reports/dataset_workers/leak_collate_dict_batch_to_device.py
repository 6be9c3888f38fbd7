# Source: https://github.com/pytorch/pytorch/issues/17359
# Report: a custom collate_fn that builds a dict batch and moves each field to CUDA failed with "CUDA error: initialization error" once the DataLoader used worker processes (the default collate worked).
# Shape: the collate function gets its device through functools.partial and moves every field of the dict batch there.
# Expect: TML010 line 15
from collections import defaultdict
from functools import partial

import torch
from torch.utils.data import DataLoader


def collate_sequences(samples, device):
    batch = defaultdict(list)
    for key in samples[0]:
        batch[key] = torch.tensor([s[key] for s in samples], dtype=torch.long).to(device)  # expect: TML010
    return dict(batch)


def make_loader(dataset, batch_size=4):
    return DataLoader(dataset, batch_size, num_workers=2,
                      collate_fn=partial(collate_sequences, device=torch.device("cuda")))
