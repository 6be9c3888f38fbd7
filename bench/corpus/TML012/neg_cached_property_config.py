# Modelled on: https://github.com/mozilla/mozci/issues/189
# Report: near-miss: cached_property stores the value on the instance (freed with it); lru_cache here caches a string.
from functools import cached_property, lru_cache

import torch


class RunInfo:
    def __init__(self, model):
        self.model = model

    @cached_property
    def param_count(self):
        return sum(p.numel() for p in self.model.parameters())

    @cached_property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device


@lru_cache(maxsize=8)
def device_name(index: int) -> str:
    return torch.cuda.get_device_name(index)
