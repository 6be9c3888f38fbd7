# Source: https://github.com/huggingface/transformers/pull/31530
# Report: the call was removed from the training loop.
# Shape: the same step without empty_cache.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)


def training_step(inputs):
    loss = model(inputs).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss.detach()


for step in range(24):
    loss = training_step(torch.randn(32, 64, device=device))
print(loss.item())
