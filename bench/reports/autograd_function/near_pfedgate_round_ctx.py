# Source: https://github.com/SHVleV9CYWkK/LightFedLab/blob/e7b2d82497efd9d3574ac84a24b0ef1e93c0ac7a/models/pfedgate/nn_nets.py
# Report: the pFedGate straight-through DifferentiableRoundFun / DifferentiableCeilFun keep the forward input as a plain ctx.input attribute (never read in backward) instead of going through save_for_backward
# Shape: the fixed Functions keep only Python metadata on ctx (a float window, a shape) and route the one tensor backward needs through ctx.save_for_backward / ctx.saved_tensors
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class DifferentiableRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, window=1.0):
        ctx.window = float(window)
        ctx.save_for_backward(scores)
        return torch.round(scores)

    @staticmethod
    def backward(ctx, grad_output):
        (scores,) = ctx.saved_tensors
        # clipped straight-through: pass the gradient only near the rounding range
        return grad_output * (scores.abs() <= ctx.window).to(grad_output.dtype), None


class DifferentiableCeil(torch.autograd.Function):
    @staticmethod
    def forward(ctx, budget):
        ctx.budget_shape = budget.shape
        return torch.ceil(budget)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clone().reshape(ctx.budget_shape)


class GatedMLP(nn.Module):
    """Global MLP whose hidden blocks are switched on/off by a per-client gate."""

    def __init__(self, in_dim, hidden, num_classes, num_blocks=8, sparsity=0.5):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, num_classes)
        self.gate = nn.Linear(in_dim, num_blocks)
        self.num_blocks = num_blocks
        self.sparsity = sparsity

    def forward(self, x):
        scores = torch.sigmoid(self.gate(x.mean(dim=0, keepdim=True))).squeeze(0)
        budget = DifferentiableCeil.apply(scores.sum() * self.sparsity)
        mask = DifferentiableRound.apply(scores * budget / self.num_blocks, 1.0)
        h = F.relu(self.fc1(x))
        h = h.view(h.size(0), self.num_blocks, -1) * mask.view(1, -1, 1)
        return self.fc2(h.flatten(1))


def local_update(model, loader, device, epochs=1, lr=0.01):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    model.train()
    total, seen = 0.0, 0
    for _ in range(epochs):
        for x, y in loader:
            x, y = x.to(device).flatten(1), y.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * y.size(0)
            seen += y.size(0)
    return {"loss": total / max(seen, 1), "num_samples": seen}
