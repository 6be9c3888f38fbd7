# Source: https://github.com/huggingface/transformers/pull/45780
# Report: the proposed fix keeps the cache on the instance, so it is freed with the model.
# Shape: same decoder module; anchors are cached in a dict attribute of the instance keyed by the shapes, with no class-level cache holding self.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class DetrDecoderHead(nn.Module):
    def __init__(self, hidden_dim, num_levels):
        super().__init__()
        self.level_embed = nn.Parameter(torch.zeros(num_levels, hidden_dim))
        self.proj = nn.Linear(hidden_dim, 4)
        self._anchor_cache = {}

    def generate_anchors(self, spatial_shapes, device):
        key = (spatial_shapes, str(device))
        if key not in self._anchor_cache:
            anchors = []
            for level, (height, width) in enumerate(spatial_shapes):
                ys, xs = torch.meshgrid(torch.arange(height, device=device), torch.arange(width, device=device), indexing="ij")
                grid = torch.stack([xs, ys], -1).float().view(-1, 2)
                wh = torch.full_like(grid, 0.05 * 2.0 ** level)
                anchors.append(torch.cat([grid, wh], -1))
            self._anchor_cache[key] = torch.cat(anchors)
        return self._anchor_cache[key]

    def forward(self, memory, spatial_shapes):
        anchors = self.generate_anchors(tuple(spatial_shapes), memory.device)
        return self.proj(memory) + anchors
