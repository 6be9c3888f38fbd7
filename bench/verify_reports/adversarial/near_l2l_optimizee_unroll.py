# Source: https://github.com/yangsenius/learning-to-learn-by-pytorch/issues/3
# Report: the optimizee must be cut from the graph at each unroll boundary.
# Shape: the same learned-optimizer run, the optimizee detached after every update (an unroll of one step).
# Expect: near-miss: must be silent
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
    grad, = torch.autograd.grad(loss, theta, retain_graph=True)
    h, c = learner(grad, state)
    state = (h.detach(), c.detach())
    theta = (theta + project(h)).detach().requires_grad_()
print(loss.item())
