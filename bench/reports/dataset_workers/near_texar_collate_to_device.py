# Source: https://github.com/asyml/texar-pytorch/pull/213
# Report: built-in data modules and examples moved batch tensors to the GPU inside collate, which breaks (CUDA init errors) once the DataLoader uses worker processes
# Shape: the fix: collate() builds CPU tensors only; the DataIterator's __next__ (main process, not a Dataset) moves the finished batch with move_memory
# Expect: near-miss: must be silent
import json
from typing import Any, Dict, List

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Batch(dict):
    def __init__(self, batch_size: int, **fields: Any):
        super().__init__(**fields)
        self.batch_size = batch_size


def padded_batch(seqs: List[List[int]], pad_id: int = 0):
    max_len = max(len(s) for s in seqs)
    out = np.full((len(seqs), max_len), pad_id, dtype=np.int64)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out, [len(s) for s in seqs]


def move_memory(batch: Batch, device: torch.device) -> Batch:
    for key, value in batch.items():
        if isinstance(value, torch.Tensor):
            batch[key] = value.to(device, non_blocking=True)
    return batch


class SRLData(Dataset):
    def __init__(self, lines: List[str], vocab: Dict[str, int]):
        self._lines = lines
        self._vocab = vocab

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> Dict[str, Any]:
        sentence = json.loads(self._lines[index])["sentences"][0]
        return {"text": sentence, "text_ids": [self._vocab.get(t, 1) for t in sentence]}

    def collate(self, examples: List[Dict[str, Any]]) -> Batch:
        tokens, length = padded_batch([ex["text_ids"] for ex in examples])
        return Batch(
            len(examples),
            text=[ex["text"] for ex in examples],
            text_ids=torch.from_numpy(tokens),
            length=torch.tensor(length),
        )


class DataIterator:
    def __init__(self, dataset: SRLData, batch_size: int, device: torch.device,
                 num_workers: int = 4):
        self._loader = DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                  num_workers=num_workers, pin_memory=True,
                                  collate_fn=dataset.collate)
        self._device = device
        self._it = None

    def __iter__(self):
        self._it = iter(self._loader)
        return self

    def __next__(self) -> Batch:
        batch = next(self._it)
        return move_memory(batch, self._device)


def build_train_iterator(path: str, vocab: Dict[str, int]) -> DataIterator:
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    return DataIterator(SRLData(lines, vocab), 32, torch.device("cuda"), num_workers=4)
