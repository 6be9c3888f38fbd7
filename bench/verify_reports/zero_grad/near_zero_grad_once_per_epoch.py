# Source: https://github.com/pytorch/pytorch/issues/47175
# Report: the reset belongs at the beginning of each iteration.
# Shape: the same loop, zero_grad() called per batch.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(24)]
for epoch in range(1):
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
print(loss.item())
