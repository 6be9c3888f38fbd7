# Source: https://github.com/hosseinshn/GradNorm/issues/9
# Report: adapting GradNorm to a transformer, CUDA ran out of memory as the iterations grew; the reporter suspected loss.backward(retain_graph=True) on the per-task losses.
# Shape: a helper backpropagates each task loss separately with retain_graph=True (the last task included); the trainer keeps the stacked task losses for the loss-ratio weighting.
# Expect: TML006 line 17
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
trunk = nn.Sequential(nn.Linear(16, 64), nn.ReLU()).to(device)
heads = nn.ModuleList([nn.Linear(64, 1) for _ in range(3)]).to(device)
optimizer = torch.optim.Adam(list(trunk.parameters()) + list(heads.parameters()), lr=1e-3)


def backward_per_task(task_losses, weights):
    for weight, task_loss in zip(weights, task_losses):
        (weight * task_loss).backward(retain_graph=True)  # expect: TML006


initial_losses = None
weights = torch.ones(3, device=device)
for step in range(24):
    features = trunk(torch.randn(32, 16, device=device))
    task_losses = torch.stack([head(features).pow(2).mean() for head in heads])
    if initial_losses is None:
        initial_losses = task_losses
    optimizer.zero_grad()
    backward_per_task(task_losses, weights)
    optimizer.step()
    weights = 3 * (task_losses / initial_losses).detach().softmax(0)
print(weights)
