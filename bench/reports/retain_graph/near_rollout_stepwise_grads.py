# Source: https://discuss.pytorch.org/t/backwards-through-a-graph-iteratively-and-efficiently/176817
# Report: rolling out a recurrence and calling backward(retain_graph=True) at every step to read the gradient so far; each step re-traverses the whole retained chain (0.002 s -> 0.06 s for 100 steps) and the chain is kept alive
# Shape: the thread's baseline: unroll the whole rollout, then one backward of the final objective after the loop; no retain_graph, no list of attached states
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class Dynamics(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, s):
        return s + 0.1 * torch.tanh(self.lin(s))


class SensitivityMonitor:
    def __init__(self, x0):
        self.x0 = x0
        self.history = []

    def record(self, step):
        g = self.x0.grad
        self.history.append((step, g.norm().item()))
        self.x0.grad.zero_()


def rollout_with_sensitivity(model, x0, n_steps=100):
    x0 = x0.clone().requires_grad_(True)
    monitor = SensitivityMonitor(x0)
    state = model(x0)
    for t in range(1, n_steps):
        state = model(state)
    # one backward through the full unrolled rollout, after the loop
    objective = state.pow(2).mean()
    objective.backward()
    monitor.record(n_steps - 1)
    return state.detach(), monitor.history


if __name__ == "__main__":
    dyn = Dynamics().cuda()
    final, hist = rollout_with_sensitivity(dyn, torch.randn(8, 64, device="cuda"))
    print(hist[-5:])
