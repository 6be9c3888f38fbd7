# Source: https://github.com/huggingface/transformers/issues/31372
# Report: torch.cuda.empty_cache() added to the Trainer's training step slowed training down; the call was removed again (pull request 31530).
# Shape: the training step method empties the CUDA cache after every optimizer step.
# Expect: TML009 line 19
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
    torch.cuda.empty_cache()  # expect: TML009
    return loss.detach()


for step in range(24):
    loss = training_step(torch.randn(32, 64, device=device))
print(loss.item())
