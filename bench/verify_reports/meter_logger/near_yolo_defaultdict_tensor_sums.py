# Source: https://github.com/MultimediaTechLab/YOLO/pull/83
# Report: the fix sums loss_val.item() in defaultdict(float).
# Shape: the same loop with float sums.
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(32, 64), nn.SiLU(), nn.Linear(64, 9)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def yolo_loss(pred, boxes, classes):
    parts = {"box": (pred[:, :4] - boxes).abs().mean(), "cls": nn.functional.cross_entropy(pred[:, 4:], classes)}
    return sum(parts.values()), parts


epoch_loss = defaultdict(float)
for batch in range(24):
    loss, parts = yolo_loss(model(torch.randn(16, 32, device=device)), torch.rand(16, 4, device=device),
                            torch.randint(0, 5, (16,), device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    for name, loss_val in parts.items():
        epoch_loss[name] += loss_val.item() * 16
print({name: float(total) / (24 * 16) for name, total in epoch_loss.items()})
