# Modelled on: https://github.com/pytorch/pytorch/pull/149354
# Report: the fix pattern: keep the tensor on the module (a buffer), so it is freed with the module.
import math

import torch
import torch.nn as nn


class SinusoidalEmbedding(nn.Module):
    def __init__(self, dim, max_len=4096):
        super().__init__()
        pos = torch.arange(max_len).float()[:, None]
        freq = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
        self.register_buffer("table", torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=-1))

    def forward(self, x):
        return x + self.table[: x.size(1)]
