# Source: https://github.com/BorealisAI/advertorch/pull/73
# Report: the fix keeps the iterates out of the graph.
# Shape: the same FISTA iterates, rebound from detached values.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).to(device).eval()
image = torch.rand(4, 64, device=device)
label = torch.randint(0, 10, (4,), device=device)
x_adv = image.clone()
y_momentum = image.clone().requires_grad_()
for k in range(24):
    loss = nn.functional.cross_entropy(model(y_momentum), label) - 0.01 * (y_momentum - image).abs().sum()
    grad, = torch.autograd.grad(loss, y_momentum, create_graph=False)
    x_next = torch.clamp(y_momentum + 0.01 * grad, 0, 1).detach()
    y_momentum = (x_next + k / (k + 3) * (x_next - x_adv)).requires_grad_()
    x_adv = x_next
print((x_adv - image).abs().max().item())
