# Source: https://github.com/huggingface/transformers/pull/40007
# Report: MaskFormer's sine position embedding was wrapped in an lru_cache keyed on (shape, device, dtype); a reviewer warned the cached tensors are never cleaned up, and the follow-up fix removed the method-level caches
# Shape: close variant that keeps the speed-up without keeping memory: lru_cache sits on a module-level function of plain ints/floats that returns a tuple of Python floats; the tensors are rebuilt per call and die with it
# Expect: near-miss: must be silent
import functools
import math

import torch
from torch import nn


@functools.lru_cache(maxsize=8)
def _inverse_frequencies(num_pos_feats: int, temperature: float) -> tuple[float, ...]:
    return tuple(temperature ** (2 * (i // 2) / num_pos_feats) for i in range(num_pos_feats))


class SinePositionEmbedding(nn.Module):
    def __init__(self, num_pos_feats=128, temperature=10000, normalize=True, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        self.scale = 2 * math.pi if scale is None else scale

    def forward(self, shape: torch.Size, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        batch, _, height, width = shape
        not_mask = torch.ones((batch, height, width), device=device, dtype=dtype)
        y_embed = not_mask.cumsum(1)
        x_embed = not_mask.cumsum(2)
        if self.normalize:
            eps = 1e-6
            y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale
        freqs = _inverse_frequencies(self.num_pos_feats, float(self.temperature))
        dim_t = torch.tensor(freqs, device=device, dtype=dtype)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


class PixelDecoderLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.pos = SinePositionEmbedding(num_pos_feats=dim // 2)
        self.attn = nn.MultiheadAttention(dim, 8, batch_first=True)

    def forward(self, feats):
        pos = self.pos(feats.shape, feats.device, feats.dtype)
        q = (feats + pos).flatten(2).transpose(1, 2)
        out, _ = self.attn(q, q, feats.flatten(2).transpose(1, 2))
        return out.transpose(1, 2).reshape(feats.shape)
