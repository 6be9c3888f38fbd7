# Source: https://github.com/fastestimator/fastestimator/pull/1234
# Report: Datasets stayed in memory after they were no longer used ("memory stickiness") because each instance wrapped its own summary() in functools.lru_cache; fixed by memoising the summary in a plain attribute.
# Shape: __init__ and the split helper rebind self.summary = lru_cache(maxsize=1)(self.summary): the cache wrapper holds the bound method, hence the dataset and its tensors, in a self-reference cycle.
# Expect: TML012 line 20; TML012 line 37
from collections import namedtuple
from functools import lru_cache
from typing import Dict, List, Sequence

import torch
from torch.utils.data import Dataset

DatasetSummary = namedtuple("DatasetSummary", ["num_instances", "shapes", "dtypes"])


class TensorMemoryDataset(Dataset):
    """Holds every sample as a dict of tensors, keyed by a contiguous integer index."""

    def __init__(self, data: Dict[int, Dict[str, torch.Tensor]]):
        self.data = data
        self.summary = lru_cache(maxsize=1)(self.summary)  # expect: TML012

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index: int) -> Dict[str, torch.Tensor]:
        return self.data[index]

    def summary(self) -> DatasetSummary:
        first = self.data[0]
        shapes = {k: tuple(v.shape) for k, v in first.items()}
        dtypes = {k: str(v.dtype) for k, v in first.items()}
        return DatasetSummary(len(self.data), shapes, dtypes)

    def _skip_init(self, data):
        obj = self.__class__.__new__(self.__class__)
        obj.data = data
        obj.summary = lru_cache(maxsize=1)(obj.summary)  # expect: TML012
        return obj

    def split(self, indices: Sequence[int]) -> "TensorMemoryDataset":
        taken = {new: self.data.pop(old) for new, old in enumerate(indices)}
        self.data = {new: v for new, (_, v) in enumerate(self.data.items())}
        self.summary.cache_clear()
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
