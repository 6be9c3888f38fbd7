# Source: https://github.com/pytorch/pytorch/issues/17359
# Report: the default collate works with worker processes; the batch is moved to CUDA by the consumer, not inside the workers.
# Shape: same dict-building collate function, CPU only; the training loop moves each field with non_blocking copies from pinned memory.
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
from torch.utils.data import DataLoader


def collate_sequences(samples):
    batch = defaultdict(list)
    for key in samples[0]:
        batch[key] = torch.tensor([s[key] for s in samples], dtype=torch.long)
    return dict(batch)


def run(model, dataset, optimizer, epochs=2, device="cuda"):
    loader = DataLoader(dataset, 4, num_workers=2, collate_fn=collate_sequences, pin_memory=True)
    for epoch in range(epochs):
        for batch in loader:
            batch = {key: value.to(device, non_blocking=True) for key, value in batch.items()}
            loss = model(**batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
