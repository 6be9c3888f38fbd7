# Source: https://github.com/fadel/pytorch_ema/issues/1
# Report: a user of an exponential-moving-average-of-weights helper asked where torch.no_grad() belongs; the shadow update must not be recorded by autograd.
# Shape: rewrite without the no_grad: the shadow tensors are updated in place (sub_) from the live parameters in a method called once per training step.
# Expect: TML005 line 20
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class WeightEMA:
    def __init__(self, parameters, decay=0.99):
        self.parameters = list(parameters)
        self.decay = decay
        self.shadow = [p.clone().detach() for p in self.parameters]

    def update(self):
        for shadow, param in zip(self.shadow, self.parameters):
            shadow.sub_((1 - self.decay) * (shadow - param))  # expect: TML005


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
