# Source: https://github.com/yangsenius/learning-to-learn-by-pytorch/issues/3
# Report: optimizing with the learned LSTM optimizer, GPU memory kept increasing until out of memory, quickly when the optimized variable was large.
# Shape: the optimizee variable is rebound from itself plus the LSTM's proposed update every step of a long run, never cut at an unroll boundary.
# Expect: TML006 line 17; TML005 line 20
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
learner = nn.LSTMCell(1, 16).to(device)
project = nn.Linear(16, 1).to(device)
target = torch.randn(64, 1, device=device)
theta = torch.zeros(64, 1, device=device, requires_grad=True)
state = None
for step in range(24):
    loss = (theta - target).pow(2).sum()
    grad, = torch.autograd.grad(loss, theta, retain_graph=True)  # expect: TML006
    h, c = learner(grad, state)
    state = (h.detach(), c.detach())
    theta = theta + project(h)  # expect: TML005
print(loss.item())
