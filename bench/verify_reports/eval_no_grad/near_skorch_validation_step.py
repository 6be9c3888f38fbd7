# Source: https://github.com/skorch-dev/skorch/pull/219
# Report: the fix runs validation_step under torch.no_grad().
# Shape: the same net, validation_step decorated with torch.no_grad().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class NeuralNet:
    def __init__(self, module):
        self.module = module.to(device)
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=0.01)

    def train_step(self, x, y):
        self.module.train()
        loss = nn.functional.cross_entropy(self.module(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def validation_step(self, x, y):
        self.module.eval()
        y_pred = self.module(x)
        return nn.functional.cross_entropy(y_pred, y).item(), y_pred.argmax(1)

    def fit(self, train, valid):
        for x, y in train:
            self.train_step(x.to(device), y.to(device))
        accuracy = 0.0
        for x, y in valid:
            loss, pred = self.validation_step(x.to(device), y.to(device))
            accuracy += (pred == y.to(device)).float().mean().item()
        return accuracy / len(valid)


net = NeuralNet(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 4)))
data = [(torch.randn(32, 64), torch.randint(0, 4, (32,))) for _ in range(24)]
print(net.fit(data[:4], data))
