# Source: https://github.com/jokester-zzz/SSA-SC/issues/2
# Report: the suggested fix records loss[key].item() in the meters.
# Shape: same dict of components and per-key AverageMeter, updated with Python floats.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def completion_losses(logits, target, weights):
    return {
        "semantic": F.cross_entropy(logits, target, weight=weights),
        "occupancy": F.binary_cross_entropy_with_logits(logits.max(dim=1).values, (target > 0).float()),
    }


def train_epoch(model, loader, optimizer, weights):
    meters = {"semantic": AverageMeter(), "occupancy": AverageMeter(), "total": AverageMeter()}
    for voxels, target in loader:
        losses = completion_losses(model(voxels), target, weights)
        losses["total"] = losses["semantic"] + losses["occupancy"]
        optimizer.zero_grad()
        losses["total"].backward()
        optimizer.step()
        for key in losses:
            meters[key].update(losses[key].item(), voxels.shape[0])
    return {key: meter.avg for key, meter in meters.items()}
