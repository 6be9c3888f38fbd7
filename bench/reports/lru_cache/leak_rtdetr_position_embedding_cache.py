# Source: https://github.com/huggingface/transformers/pull/45708
# Report: RT-DETR kept ~85 MB of GPU memory after the model was deleted because a functools.lru_cache wrapped the sine position-embedding forward method, so the class-level cache held every instance (and its returned tensors) forever.
# Shape: the position-embedding module decorates its forward method with lru_cache, so the cache keys hold self and the values hold device tensors.
# Expect: TML012 line 18
import functools
import math

import torch
from torch import nn


class SinePositionEmbedding(nn.Module):
    def __init__(self, embed_dim=256, temperature=10000):
        super().__init__()
        self.embed_dim = embed_dim
        self.temperature = temperature

    @functools.lru_cache(maxsize=32)  # expect: TML012
    def forward(self, height, width, device, dtype):
        grid_w = torch.arange(width, device=device, dtype=dtype)
        grid_h = torch.arange(height, device=device, dtype=dtype)
        grid_w, grid_h = torch.meshgrid(grid_w, grid_h, indexing="xy")
        pos_dim = self.embed_dim // 4
        omega = torch.arange(pos_dim, device=device, dtype=dtype) / pos_dim
        omega = 1.0 / (self.temperature ** omega)
        out_w = grid_w.flatten()[:, None] * omega[None]
        out_h = grid_h.flatten()[:, None] * omega[None]
        return torch.cat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], dim=1)[None]


class HybridEncoderLayer(nn.Module):
    def __init__(self, embed_dim=256):
        super().__init__()
        self.pos = SinePositionEmbedding(embed_dim)
        self.attn = nn.MultiheadAttention(embed_dim, 8, batch_first=True)

    def forward(self, feat):
        b, c, h, w = feat.shape
        seq = feat.flatten(2).transpose(1, 2)
        pos = self.pos(h, w, feat.device, feat.dtype)
        out, _ = self.attn(seq + pos, seq + pos, seq)
        return out.transpose(1, 2).reshape(b, c, h, w)
