# Source: https://github.com/fastestimator/fastestimator/pull/1234
# Report: Datasets stayed in memory after they were no longer used ("memory stickiness") because each instance wrapped its own summary() in functools.lru_cache; fixed by memoising the summary in a plain attribute.
# Shape: fixed version: summary() memoises its result in self._summary and every mutation resets it to None; no lru_cache wrapper refers back to the instance.
# Expect: near-miss: must be silent
from collections import namedtuple
from typing import Dict, List, Optional, Sequence

import torch
from torch.utils.data import Dataset

DatasetSummary = namedtuple("DatasetSummary", ["num_instances", "shapes", "dtypes"])


class TensorMemoryDataset(Dataset):
    """Holds every sample as a dict of tensors, keyed by a contiguous integer index."""

    def __init__(self, data: Dict[int, Dict[str, torch.Tensor]]):
        self.data = data
        self._summary: Optional[DatasetSummary] = None

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index: int) -> Dict[str, torch.Tensor]:
        return self.data[index]

    def summary(self) -> DatasetSummary:
        if self._summary is not None:
            return self._summary
        first = self.data[0]
        shapes = {k: tuple(v.shape) for k, v in first.items()}
        dtypes = {k: str(v.dtype) for k, v in first.items()}
        self._summary = DatasetSummary(len(self.data), shapes, dtypes)
        return self._summary

    def _skip_init(self, data):
        obj = self.__class__.__new__(self.__class__)
        obj.data = data
        obj._summary = None
        return obj

    def split(self, indices: Sequence[int]) -> "TensorMemoryDataset":
        taken = {new: self.data.pop(old) for new, old in enumerate(indices)}
        self.data = {new: v for new, (_, v) in enumerate(self.data.items())}
        self._summary = None
        return self._skip_init(taken)


def cross_validate(samples: List[Dict[str, torch.Tensor]], folds: int, fit_fn):
    scores = []
    fold_size = len(samples) // folds
    for fold in range(folds):
        full = TensorMemoryDataset({i: s for i, s in enumerate(samples)})
        held_out = full.split(range(fold * fold_size, (fold + 1) * fold_size))
        print(full.summary(), held_out.summary())
        scores.append(fit_fn(full, held_out))
    return scores
