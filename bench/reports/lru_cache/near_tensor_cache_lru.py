# Source: https://github.com/BenediktAlkin/KappaModules/blob/a2b5f9cef8b26d7f381ecb01b21e32cec2c56047/kappamodules/utils/tensor_cache.py
# Report: the library's tensor_cache memoised torch.zeros/ones/full/arange with @lru_cache(maxsize=None) keyed on (size, device, dtype): every new size pins one more device tensor for the life of the process (the author later replaced it with a checked dict cache)
# Shape: the cache is kept only for pure-Python bookkeeping (a tuple of segment offsets from a tuple of counts); every tensor is built fresh per call with new_zeros/arange, so nothing on the device is memoised
# Expect: near-miss: must be silent
import functools
from itertools import accumulate

import torch
import torch.nn as nn


@functools.lru_cache(maxsize=256)
def segment_offsets(counts):
    # counts is a tuple of ints; the result is a tuple of ints, never a tensor
    return (0,) + tuple(accumulate(counts))


class LatentPointPooling(nn.Module):
    """Soft-assigns a ragged batch of points to a fixed set of latent queries."""

    def __init__(self, dim, num_latents=32, num_classes=40):
        super().__init__()
        self.key = nn.Linear(dim, dim)
        self.queries = nn.Parameter(torch.randn(num_latents, dim) * 0.02)
        self.head = nn.Linear(num_latents * dim, num_classes)

    def forward(self, points, counts):
        # points: (sum(counts), dim) on the GPU, counts: list with one int per sample
        total, dim = points.shape
        num_latents = self.queries.shape[0]
        offsets = segment_offsets(tuple(counts))
        assert offsets[-1] == total
        sample_ids = torch.repeat_interleave(
            torch.arange(len(counts), device=points.device),
            torch.as_tensor(counts, device=points.device),
        )
        bias = points.new_zeros(total, num_latents)
        scores = (self.key(points) @ self.queries.t() + bias).softmax(dim=1)
        weighted = scores.unsqueeze(2) * points.unsqueeze(1)
        pooled = points.new_zeros(len(counts), num_latents, dim)
        pooled = pooled.index_add(0, sample_ids, weighted)
        return self.head(pooled.flatten(1))


def train_epoch(model, loader, optimizer, device="cuda", log_every=50):
    model.train()
    criterion = nn.CrossEntropyLoss()
    running = 0.0
    for step, batch in enumerate(loader):
        points = batch["points"].to(device, non_blocking=True)
        labels = batch["labels"].to(device, non_blocking=True)
        logits = model(points, batch["counts"])
        loss = criterion(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        running += loss.item()
        if (step + 1) % log_every == 0:
            print(f"step {step + 1}: loss {running / log_every:.4f}")
            running = 0.0
