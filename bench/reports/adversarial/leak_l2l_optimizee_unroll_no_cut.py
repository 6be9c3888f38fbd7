# Source: https://github.com/yangsenius/learning-to-learn-by-pytorch/issues/3
# Report: optimizing with the learned LSTM optimizer, GPU memory kept increasing until out of memory; it grew quickly when the optimized variable was large (an image-sized matrix).
# Shape: the optimizee variable is rebound from itself plus the LSTM's proposed update every step of a long run, never cut at an unroll boundary.
# Expect: TML005 lines 31, 32
import torch
import torch.nn as nn


class LSTMOptimizer(nn.Module):
    def __init__(self, hidden=20):
        super().__init__()
        self.cell = nn.LSTMCell(1, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, grad, state):
        h, c = self.cell(grad.reshape(-1, 1), state)
        return self.out(h).reshape(grad.shape), (h, c)


def quadratic(w, y):
    return ((w @ w.t() - y) ** 2).mean()


def run_learned_optimizer(opt_net, y, steps=1000, hidden=20):
    x = torch.randn(y.shape[0], 8, requires_grad=True)
    state = (torch.zeros(x.numel(), hidden), torch.zeros(x.numel(), hidden))
    losses = []
    for step in range(steps):
        loss = quadratic(x, y)
        grad, = torch.autograd.grad(loss, x, retain_graph=True)
        update, state = opt_net(grad, state)  # expect: TML005
        x = x + update  # expect: TML005
        losses.append(loss.item())
    return x, losses
