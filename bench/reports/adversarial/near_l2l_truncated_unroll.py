# Source: https://github.com/yangsenius/learning-to-learn-by-pytorch/issues/3
# Report: training a learned optimizer unrolls the optimizee for a fixed number of steps and then cuts the history, so the graph covers one unroll only.
# Shape: the optimizee is rebound from itself plus the update, but detached (with the LSTM state) at each unroll boundary after the meta-backward.
# Expect: near-miss: must be silent
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


def meta_train(opt_net, y, meta_opt, steps=1000, unroll=20, hidden=20):
    x = torch.randn(y.shape[0], 8, requires_grad=True)
    state = (torch.zeros(x.numel(), hidden), torch.zeros(x.numel(), hidden))
    for start in range(0, steps, unroll):
        meta_loss = 0
        for _ in range(unroll):
            loss = quadratic(x, y)
            grad, = torch.autograd.grad(loss, x, retain_graph=True)
            update, state = opt_net(grad.detach(), state)
            x = x + update
            meta_loss = meta_loss + quadratic(x, y)
        meta_opt.zero_grad()
        meta_loss.backward()
        meta_opt.step()
        x = x.detach().requires_grad_(True)
        state = (state[0].detach(), state[1].detach())
    return x
