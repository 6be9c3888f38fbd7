# Source: https://github.com/pnnl/neuromancer/pull/292
# Report: the fix detaches the metrics before they go into the history.
# Shape: the same trainer; the history appends value.detach().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.history = {"loss": [], "residual": []}

    def step(self, x, y):
        pred = self.model(x)
        residual = (pred - y).abs().mean()
        loss = nn.functional.mse_loss(pred, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss, "residual": residual}

    def train(self, steps):
        for epoch in range(steps):
            metrics = self.step(torch.randn(32, 8, device=device), torch.randn(32, 2, device=device))
            for key, value in metrics.items():
                self.history[key].append(value.detach())


trainer = Trainer(nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 2)).to(device))
trainer.train(24)
print(len(trainer.history["loss"]))
