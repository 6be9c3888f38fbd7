# Source: https://github.com/MoonshotAI/Kimi-Audio/issues/117
# Report: without the cache each sample is built when read and dropped after its step.
# Shape: the same dataset without lru_cache.
# Expect: near-miss: must be silent
from functools import lru_cache

import torch
from torch import nn
from torch.utils.data import Dataset

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class AudioDataset(Dataset):
    def __len__(self):
        return 10_000

    def __getitem__(self, index):
        generator = torch.Generator().manual_seed(index)
        return {"features": torch.randn(50, 40, generator=generator), "label": torch.tensor(index % 7)}


dataset = AudioDataset()
model = nn.Sequential(nn.Flatten(), nn.Linear(2000, 7)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(24):
    samples = [dataset[step * 8 + i] for i in range(8)]
    x = torch.stack([s["features"] for s in samples]).to(device)
    y = torch.stack([s["label"] for s in samples]).to(device)
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
