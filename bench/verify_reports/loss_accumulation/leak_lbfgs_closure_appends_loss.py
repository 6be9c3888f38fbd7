# Source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140
# Report: the line-search optimizer's training of a Lyapunov function leaked memory; the fix: the closure returns the loss and the list keeps only its float value.
# Shape: a factory builds the closure handed to LBFGS (called several times per step); the closure appends every loss to a list the training loop keeps.
# Expect: TML001 line 19
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
        losses.append(loss)  # expect: TML001
        return loss

    return closure


losses = []
for it in range(24):
    states = torch.randn(32, 4, device=device)
    optimizer.step(make_closure(states, 0.9 * states, losses))
print(len(losses))
