# Source: https://github.com/NVIDIA/TransformerEngine/pull/798
# Report: an lru_cache on the helper that builds cu_seqlens device tensors kept those GPU tensors alive in the cache across steps and devices and led to illegal memory accesses in LLM workloads; the fix removed the lru_cache
# Shape: module-level helper decorated with functools.lru_cache returns an int32 CUDA tensor built with device=, called from every attention forward with varying batch/sequence sizes
# Expect: TML012 line 11
import functools

import torch
from torch import nn


@functools.lru_cache  # expect: TML012
def _get_full_cu_seqlens(batch_size: int, max_seqlen: int, device: torch.device) -> torch.Tensor:
    """Cumulative sequence lengths for a batch of equal-length sequences."""
    return torch.arange(
        0,
        (batch_size + 1) * max_seqlen,
        step=max_seqlen,
        dtype=torch.int32,
        device=device,
    )


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
