# Source: https://github.com/MoonshotAI/Kimi-Audio/issues/117
# Report: @lru_cache(maxsize=None) on the fine-tuning dataset's __getitem__ (returning a dict of tensors) may cause memory to grow as the training data grows.
# Shape: the dataset method returns tensors and is cached without bound on (self, index): every sample ever read stays in memory, and so does the dataset.
# Expect: TML012 line 21
from functools import lru_cache
from typing import Dict

import torch
from torch.utils.data import Dataset


class LazySupervisedDataset(Dataset):
    def __init__(self, records, tokenizer, max_len=2048):
        self.records = records
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.records)

    @lru_cache(maxsize=None)  # expect: TML012
    def __getitem__(self, i) -> Dict[str, torch.Tensor]:
        ids = self.tokenizer(self.records[i]["text"])[: self.max_len]
        input_ids = torch.tensor(ids, dtype=torch.long)
        labels = input_ids.clone()
        labels[: self.records[i]["prompt_len"]] = -100
        return {"input_ids": input_ids, "labels": labels, "attention_mask": torch.ones_like(input_ids)}
