# Source: https://github.com/jimmyyhwu/pose-interpreter-networks/blob/a2313d5f3374a99b5b99bb4c96fd1f8a1d90e98f/pose_estimation/train.py
# Report: audited bug: the pose-estimation train() loop hands the raw loss tensor and the graph-attached position/orientation error means to AverageMeter.update, whose body does self.sum += val * n, so each meter's sum chains one more autograd node per batch for the whole epoch
# Shape: the value travels into a same-module meter object built before the loop; update() stores it on self (val) and folds it into self.sum
# Expect: TML001 line 63; TML001 line 64; TML001 line 65
import time

import numpy as np
import torch
from torch import nn


def batch_rotation_angle(q1, q2):
    return torch.acos(torch.clamp(2 * (q1 * q2).sum(dim=1).pow(2) - 1, max=1))


class AverageMeter(object):
    """Computes and stores the average and current value"""
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class PoseCNNLoss(nn.Module):
    def forward(self, input, target, object_index):
        position_loss = torch.abs(target[:, :3] - input[:, :3]).mean()
        orientation_loss = (1 - (input[:, 3:] * target[:, 3:]).sum(dim=1).pow(2)).mean()
        return position_loss + orientation_loss


def train(train_loader, model, criterion, optimizer, epoch, print_freq=10):
    batch_time = AverageMeter()
    data_time = AverageMeter()
    position_errors = AverageMeter()
    orientation_errors = AverageMeter()
    losses = AverageMeter()

    model.train()
    end = time.time()

    for i, (input, target, object_index) in enumerate(train_loader):
        data_time.update(time.time() - end)

        target = target.cuda(non_blocking=True)
        object_index = object_index.cuda(non_blocking=True)

        position, orientation = model(input, object_index)
        position_error = (target[:, :3] - position).pow(2).sum(dim=1).sqrt()
        orientation_error = 180.0 / np.pi * batch_rotation_angle(target[:, 3:], orientation)
        output = torch.cat((position, orientation), 1)
        loss = criterion(output, target, object_index)

        position_errors.update(position_error.mean(), input.size(0))  # expect: TML001
        orientation_errors.update(orientation_error.mean(), input.size(0))  # expect: TML001
        losses.update(loss, input.size(0))  # expect: TML001

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(time.time() - end)
        end = time.time()

        if i % print_freq == 0:
            print('Epoch: [{0}][{1}/{2}]\t'
                  'Position error {pe.val:.4f} ({pe.avg:.4f})\t'
                  'Loss {loss.val:.4f} ({loss.avg:.4f})'.format(
                      epoch, i, len(train_loader), pe=position_errors, loss=losses))

    return (batch_time.avg, data_time.avg, position_errors.avg, orientation_errors.avg, losses.avg)
