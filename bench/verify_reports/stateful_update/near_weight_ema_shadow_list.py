# Source: https://github.com/fadel/pytorch_ema/issues/1
# Report: the answer: the shadow update belongs under torch.no_grad().
# Shape: the same helper, its update decorated with torch.no_grad().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class WeightEMA:
    def __init__(self, parameters, decay=0.99):
        self.parameters = list(parameters)
        self.decay = decay
        self.shadow = [p.clone().detach() for p in self.parameters]

    @torch.no_grad()
    def update(self):
        for shadow, param in zip(self.shadow, self.parameters):
            shadow.sub_((1 - self.decay) * (shadow - param))


model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
ema = WeightEMA(model.parameters())
for step in range(24):
    loss = nn.functional.cross_entropy(model(torch.randn(16, 32, device=device)), torch.randint(0, 10, (16,), device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ema.update()
print(sum(float(s.sum()) for s in ema.shadow))
