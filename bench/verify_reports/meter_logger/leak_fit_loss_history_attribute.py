# Source: https://github.com/rballester/tntorch/pull/19
# Report: a fitting routine kept every step's loss in loss_history, each entry a full computational graph; 1000 iterations froze a 12 GB machine.
# Shape: the history is an attribute of the fitting object, appended from the loss a helper method returns.
# Expect: TML001 line 28
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class TensorTrainFit:
    def __init__(self, rank=4, size=16):
        self.cores = nn.ParameterList([nn.Parameter(torch.randn(rank, size, rank, device=device) * 0.3) for _ in range(3)])
        self.optimizer = torch.optim.Adam(self.cores.parameters(), lr=1e-2)
        self.loss_history = []

    def loss(self, target):
        full = torch.einsum("aib,bjc,cka->ijk", *self.cores)
        return (full - target).pow(2).mean()

    def fit(self, target, steps):
        for step in range(steps):
            self.optimizer.zero_grad()
            loss = self.loss(target)
            loss.backward()
            self.optimizer.step()
            self.loss_history.append(loss)  # expect: TML001


fit = TensorTrainFit()
fit.fit(torch.randn(16, 16, 16, device=device), steps=24)
print(float(fit.loss_history[-1]))
