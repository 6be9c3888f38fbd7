# Source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# Report: the fix keeps only the float value of each loss.
# Shape: the same closure; it appends loss.item().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
net = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
optimizer = torch.optim.LBFGS(net.parameters(), lr=0.1, max_iter=3)


def make_closure(states, next_states, losses):
    def closure():
        optimizer.zero_grad()
        loss = torch.relu(net(next_states) - net(states) + 0.01).mean() + torch.relu(-net(states)).mean()
        loss.backward()
        losses.append(loss.item())
        return loss

    return closure


losses = []
for it in range(24):
    states = torch.randn(32, 4, device=device)
    optimizer.step(make_closure(states, 0.9 * states, losses))
print(len(losses))
