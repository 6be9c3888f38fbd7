# Source: https://github.com/ThibaultGROUEIX/AtlasNet/issues/12
# Report: the custom chamfer (nearest-neighbour distance) autograd Function kept its outputs dist1/dist2 as attributes of the function object; host memory leaked every iteration until save_for_backward was used
# Shape: the fix from the thread: everything backward needs goes through ctx.save_for_backward and the outputs are not stashed on ctx, so no cycle forms
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def nn_distance(xyz1, xyz2):
    d = torch.cdist(xyz1, xyz2) ** 2
    dist1, idx1 = d.min(dim=2)
    dist2, idx2 = d.min(dim=1)
    return dist1, dist2, idx1, idx2


class NNDFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, xyz1, xyz2):
        dist1, dist2, idx1, idx2 = nn_distance(xyz1, xyz2)
        ctx.save_for_backward(xyz1, xyz2, idx1, idx2)
        return dist1, dist2

    @staticmethod
    def backward(ctx, grad_dist1, grad_dist2):
        xyz1, xyz2, idx1, idx2 = ctx.saved_tensors
        nn1 = torch.gather(xyz2, 1, idx1.unsqueeze(-1).expand(-1, -1, 3))
        nn2 = torch.gather(xyz1, 1, idx2.unsqueeze(-1).expand(-1, -1, 3))
        g1 = 2 * (xyz1 - nn1) * grad_dist1.unsqueeze(-1)
        g2 = 2 * (xyz2 - nn2) * grad_dist2.unsqueeze(-1)
        return g1, g2


class ChamferLoss(nn.Module):
    def forward(self, pred, target):
        dist1, dist2 = NNDFunction.apply(pred, target)
        return dist1.mean() + dist2.mean()


def train_epoch(network, loader, optimizer):
    criterion = ChamferLoss()
    network.train()
    running = 0.0
    for points in loader:
        points = points.cuda()
        optimizer.zero_grad()
        reconstruction = network(points)
        loss = criterion(reconstruction, points)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running / len(loader)
