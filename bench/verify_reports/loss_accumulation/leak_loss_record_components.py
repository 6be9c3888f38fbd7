# Source: https://github.com/JIA-Lab-research/DecoupleNet/issues/3
# Report: GPU memory ran out after some iterations because loss components were recorded with += and no .item(), storing every state of the loss for the epoch.
# Shape: forward returns a dict of loss components in training mode; the epoch record adds each component, unconverted, to a dict of running sums.
# Expect: TML001 line 32
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 5))

    def forward(self, x, target):
        logits = self.body(x)
        return {"seg": nn.functional.cross_entropy(logits, target), "reg": logits.pow(2).mean() * 1e-3}


model = SegNet().to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
record = {"seg": 0.0, "reg": 0.0}
for it in range(24):
    losses = model(torch.randn(16, 32, device=device), torch.randint(0, 5, (16,), device=device))
    total = sum(losses.values())
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    for name, value in losses.items():
        record[name] += value  # expect: TML001
print({name: float(value) / 24 for name, value in record.items()})
