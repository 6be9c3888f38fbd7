# Source: https://discuss.pytorch.org/t/implementing-batchnorm-in-pytorch-problem-with-updating-self-running-mean-and-self-running-var/49314/11
# Report: a from-scratch BatchNorm rebinds self.running_mean / self.running_var from the batch statistics in forward; the buffers carry the batch graph into the next call.
# Shape: the batch statistics come back from a helper method; forward rebinds the running statistics on self from them.
# Expect: TML005 lines 26, 27
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class ScratchBatchNorm(nn.Module):
    def __init__(self, features, momentum=0.1):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.momentum = momentum
        self.running_mean = torch.zeros(features)
        self.running_var = torch.ones(features)

    def batch_stats(self, x):
        return x.mean(0), x.var(0, unbiased=False)

    def forward(self, x):
        mean, var = self.batch_stats(x)
        self.running_mean = (1 - self.momentum) * self.running_mean.to(x.device) + self.momentum * mean  # expect: TML005
        self.running_var = (1 - self.momentum) * self.running_var.to(x.device) + self.momentum * var  # expect: TML005
        return (x - mean) / torch.sqrt(var + 1e-5) * self.weight + self.bias


model = nn.Sequential(nn.Linear(16, 64), ScratchBatchNorm(64), nn.ReLU(), nn.Linear(64, 3)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(24):
    loss = nn.functional.cross_entropy(model(torch.randn(32, 16, device=device)), torch.randint(0, 3, (32,), device=device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(model[1].running_mean.sum().item())
