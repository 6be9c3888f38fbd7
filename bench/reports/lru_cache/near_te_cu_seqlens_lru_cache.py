# Source: https://github.com/NVIDIA/TransformerEngine/pull/798
# Report: an lru_cache on the helper that builds cu_seqlens device tensors kept those GPU tensors alive in the cache across steps and devices and led to illegal memory accesses in LLM workloads; the fix removed the lru_cache
# Shape: close variant: lru_cache stays only on a helper that returns plain Python ints (the offsets); the CUDA tensor is built fresh in every forward and dies with the step
# Expect: near-miss: must be silent
import functools
from typing import Tuple

import torch
from torch import nn


@functools.lru_cache(maxsize=64)
def _cu_seqlens_offsets(batch_size: int, max_seqlen: int) -> Tuple[int, ...]:
    """Cumulative sequence lengths for a batch of equal-length sequences."""
    return tuple(range(0, (batch_size + 1) * max_seqlen, max_seqlen))


def _get_full_cu_seqlens(batch_size: int, max_seqlen: int, device: torch.device) -> torch.Tensor:
    offsets = _cu_seqlens_offsets(batch_size, max_seqlen)
    return torch.tensor(offsets, dtype=torch.int32, device=device)


class FlashSelfAttention(nn.Module):
    def __init__(self, softmax_scale=None, attention_dropout=0.0):
        super().__init__()
        self.softmax_scale = softmax_scale
        self.attention_dropout = attention_dropout

    def forward(self, query_layer, key_layer, value_layer, flash_attn_varlen_func):
        # [b, s, h, d] layout
        batch_size, max_seqlen_q = query_layer.shape[:2]
        max_seqlen_kv = key_layer.shape[1]

        q = query_layer.reshape(-1, *query_layer.shape[2:])
        k = key_layer.reshape(-1, *key_layer.shape[2:])
        v = value_layer.reshape(-1, *value_layer.shape[2:])

        cu_seqlens_q = _get_full_cu_seqlens(batch_size, max_seqlen_q, query_layer.device)
        cu_seqlens_kv = _get_full_cu_seqlens(batch_size, max_seqlen_kv, key_layer.device)

        out = flash_attn_varlen_func(
            q, k, v,
            cu_seqlens_q, cu_seqlens_kv,
            max_seqlen_q, max_seqlen_kv,
            self.attention_dropout if self.training else 0.0,
            softmax_scale=self.softmax_scale,
            causal=True,
        )
        return out.view(batch_size, max_seqlen_q, -1)
