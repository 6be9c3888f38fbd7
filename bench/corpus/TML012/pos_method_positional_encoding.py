# Modelled on: https://github.com/pytorch/pytorch/pull/149354
# Report: @functools.cache kept `self` alive, so after deleting the model its memory was still occupied.
import functools
import math

import torch
import torch.nn as nn


class SinusoidalEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    @functools.lru_cache(maxsize=None)  # expect: TML012
    def table(self, length, device):
        pos = torch.arange(length, device=device).float()[:, None]
        freq = torch.exp(torch.arange(0, self.dim, 2, device=device) * (-math.log(10000.0) / self.dim))
        return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1)

    def forward(self, x):
        return x + self.table(x.size(1), x.device)
