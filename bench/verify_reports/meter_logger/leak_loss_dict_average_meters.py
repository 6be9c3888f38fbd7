# Source: https://github.com/jokester-zzz/SSA-SC/issues/2
# Report: training and validation losses were recorded per key as loss[key] instead of loss[key].item(), and GPU memory kept rising.
# Shape: the criterion returns a dict of loss components; each goes into its own AverageMeter, whose update keeps a running sum.
# Expect: TML001 line 36
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0, 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n


def criterion(pred, occupancy, semantics):
    return {"completion": nn.functional.binary_cross_entropy_with_logits(pred[:, 0], occupancy),
            "semantic": nn.functional.cross_entropy(pred[:, 1:], semantics)}


model = nn.Sequential(nn.Linear(24, 64), nn.ReLU(), nn.Linear(64, 6)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
meters = {"completion": AverageMeter(), "semantic": AverageMeter()}
for it in range(24):
    pred = model(torch.randn(16, 24, device=device))
    loss = criterion(pred, torch.rand(16, device=device), torch.randint(0, 5, (16,), device=device))
    optimizer.zero_grad()
    sum(loss.values()).backward()
    optimizer.step()
    for key in loss:
        meters[key].update(loss[key], 16)  # expect: TML001
print({key: float(meter.sum) / meter.count for key, meter in meters.items()})
