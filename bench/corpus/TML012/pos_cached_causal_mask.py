# Modelled on: https://github.com/pymc-devs/pytensor/pull/1660
# Report: switching from lru_cache (128 entries) to functools.cache made the cache grow without bounds.
from functools import cache

import torch


@cache  # expect: TML012
def causal_mask(size: int, device: str) -> torch.Tensor:
    return torch.triu(torch.full((size, size), float("-inf"), device=device), diagonal=1)


def attention(q, k, v):
    scores = q @ k.transpose(-2, -1) / q.size(-1) ** 0.5
    scores = scores + causal_mask(q.size(-2), str(q.device))
    return scores.softmax(-1) @ v
