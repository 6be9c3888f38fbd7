# Modelled on: https://github.com/astral-sh/ruff/issues/12917
# Report: near-miss: cached functions that take and return plain Python values.
from functools import lru_cache


@lru_cache(maxsize=None)
def vocab_size(tokenizer_name: str) -> int:
    with open(f"{tokenizer_name}/vocab.txt") as f:
        return sum(1 for _ in f)


@lru_cache(maxsize=32)
def bucket_boundaries(max_len: int, step: int) -> tuple:
    return tuple(range(step, max_len + step, step))
