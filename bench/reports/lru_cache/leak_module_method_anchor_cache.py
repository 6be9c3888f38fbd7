# Source: https://github.com/huggingface/transformers/pull/45780
# Report: a method-level lru_cache wrapper on detection models kept a class-level cache keyed on self, so deleted models (and the anchor tensors it returned) were never freed.
# Shape: a decoder module decorates its anchor-generation method with functools.lru_cache; the cache lives on the class, holds self and every device tensor it returned.
# Expect: TML012 line 17
import functools

import torch
import torch.nn as nn


class DetrDecoderHead(nn.Module):
    def __init__(self, hidden_dim, num_levels):
        super().__init__()
        self.level_embed = nn.Parameter(torch.zeros(num_levels, hidden_dim))
        self.proj = nn.Linear(hidden_dim, 4)

    @functools.lru_cache(maxsize=32)  # expect: TML012
    def generate_anchors(self, spatial_shapes, device):
        anchors = []
        for level, (height, width) in enumerate(spatial_shapes):
            ys, xs = torch.meshgrid(torch.arange(height, device=device), torch.arange(width, device=device), indexing="ij")
            grid = torch.stack([xs, ys], -1).float().view(-1, 2)
            wh = torch.full_like(grid, 0.05 * 2.0 ** level)
            anchors.append(torch.cat([grid, wh], -1))
        return torch.cat(anchors)

    def forward(self, memory, spatial_shapes):
        anchors = self.generate_anchors(tuple(spatial_shapes), memory.device)
        return self.proj(memory) + anchors
