# Source: https://github.com/kkirchheim/pytorch-ood/issues/93
# Report: detector.fit() on ImageNet-1k ran out of GPU memory because extract_features kept all 50k embeddings and labels on the GPU
# Shape: embeddings computed under no_grad stay on the device and are pushed into a module-level TensorBuffer helper (hidden store: append into self._data lists) created before the loop
# Expect: TML004 line 47; TML004 line 48
from collections import defaultdict
from typing import Callable, Optional, Tuple

import torch
from torch import Tensor
from torch.utils.data import DataLoader


class TensorBuffer:
    """Collects tensors under string keys and concatenates them on request."""

    def __init__(self):
        self._data = defaultdict(list)

    def append(self, key: str, value: Tensor) -> "TensorBuffer":
        self._data[key].append(value)
        return self

    def get(self, key: str) -> Tensor:
        return torch.cat(self._data[key], dim=0)

    def is_empty(self) -> bool:
        return len(self._data) == 0


def is_known(labels: Tensor) -> Tensor:
    return labels >= 0


def extract_features(
    data_loader: DataLoader, model: Callable[[Tensor], Tensor], device: Optional[str]
) -> Tuple[Tensor, Tensor]:
    buffer = TensorBuffer()

    with torch.no_grad():
        for batch in data_loader:
            x, y = batch
            x = x.to(device)
            y = y.to(device)
            known = is_known(y)
            if known.any():
                z = model(x[known])
                buffer.append("embedding", z)  # expect: TML004
                buffer.append("label", y[known])  # expect: TML004

    if buffer.is_empty():
        raise ValueError("No in-distribution samples in loader")

    return buffer.get("embedding"), buffer.get("label")


class Mahalanobis:
    def __init__(self, model):
        self.model = model
        self.mu = None

    def fit(self, data_loader, device="cuda:0"):
        z, y = extract_features(data_loader, self.model, device)
        return self.fit_features(z, y)

    def fit_features(self, z, y):
        classes = y.unique()
        self.mu = torch.stack([z[y == c].mean(dim=0) for c in classes])
        return self
