# Source: https://github.com/MoonshotAI/Kimi-Audio/issues/117
# Report: the issue points at caching whole tensor samples without bound; caching a bounded number of tokenisations as plain lists and building the tensors per call keeps memory flat.
# Shape: a module-level cached function returns a tuple of ints with a maxsize; __getitem__ is not cached and builds its tensors each time.
# Expect: near-miss: must be silent
from functools import lru_cache
from typing import Dict, Tuple

import torch
from torch.utils.data import Dataset


@lru_cache(maxsize=4096)
def token_ids(text: str, max_len: int) -> Tuple[int, ...]:
    return tuple(ord(ch) % 32000 for ch in text[:max_len])


class LazySupervisedDataset(Dataset):
    def __init__(self, records, max_len=2048):
        self.records = records
        self.max_len = max_len

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i) -> Dict[str, torch.Tensor]:
        input_ids = torch.tensor(token_ids(self.records[i]["text"], self.max_len), dtype=torch.long)
        labels = input_ids.clone()
        labels[: self.records[i]["prompt_len"]] = -100
        return {"input_ids": input_ids, "labels": labels, "attention_mask": torch.ones_like(input_ids)}
