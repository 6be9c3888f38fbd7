# Modelled on: https://github.com/pytorch/pytorch/issues/40403
# Report: near-miss: a GPU-side lookup table with __getitem__ that is not a Dataset and never runs in a DataLoader worker.
import torch


class DeviceEmbeddingTable:
    def __init__(self, weights):
        self.table = torch.as_tensor(weights).cuda()

    def __getitem__(self, ids):
        return self.table[torch.as_tensor(ids).cuda()]
