# Source: https://github.com/pytorch/pytorch/issues/47175
# Report: it is easy to introduce a nasty bug by forgetting zero_grad() or calling it at the beginning of each epoch instead of each iteration; the request is a warning when step() runs without a reset.
# Shape: zero_grad() is called once per epoch, before the batch loop; every step then applies the sum of all the epoch's gradients so far.
# Expect: TML002 line 18
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(24)]
for epoch in range(1):
    optimizer.zero_grad()
    for x, y in batches:
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()  # expect: TML002
print(loss.item())
