# Source: https://github.com/asyml/texar-pytorch/pull/213
# Report: built-in data modules and examples moved batch tensors to the GPU inside collate, which breaks (CUDA init errors) once the DataLoader uses worker processes
# Shape: the Dataset subclass's own collate() method (passed as collate_fn by a DataIterator wrapper) builds the batch and calls .to(self.device) (a CUDA device) on it
# Expect: TML010 line 60; TML010 line 61
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


class DatasetBase(Dataset):
    def __init__(self, lines: List[str], device: torch.device):
        self._lines = lines
        self.device = device

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> Dict[str, Any]:
        return self.process(self._lines[index])

    def process(self, raw: str) -> Dict[str, Any]:
        raise NotImplementedError

    def collate(self, examples: List[Dict[str, Any]]) -> Batch:
        raise NotImplementedError


class SRLData(DatasetBase):
    def __init__(self, lines, vocab, device):
        super().__init__(lines, device)
        self._vocab = vocab

    def process(self, raw: str) -> Dict[str, Any]:
        record = json.loads(raw)
        sentence = record["sentences"][0]
        return {"text": sentence, "text_ids": [self._vocab.get(t, 1) for t in sentence]}

    def collate(self, examples: List[Dict[str, Any]]) -> Batch:
        tokens, length = padded_batch([ex["text_ids"] for ex in examples])
        return Batch(
            len(examples),
            text=[ex["text"] for ex in examples],
            text_ids=torch.from_numpy(tokens).to(self.device),  # expect: TML010
            length=torch.tensor(length).to(self.device),  # expect: TML010
        )


class DataIterator:
    def __init__(self, dataset: DatasetBase, batch_size: int, num_workers: int = 4):
        self._loader = DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                  num_workers=num_workers, collate_fn=dataset.collate)

    def __iter__(self):
        return iter(self._loader)


def build_train_iterator(path: str, vocab: Dict[str, int]) -> DataIterator:
    with open(path) as f:
        lines = [line for line in f if line.strip()]
    dataset = SRLData(lines, vocab, device=torch.device("cuda"))
    return DataIterator(dataset, batch_size=32, num_workers=4)
