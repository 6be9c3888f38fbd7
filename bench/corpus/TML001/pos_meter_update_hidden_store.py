# Modelled on: https://github.com/lyq133/LIC-HPCM/issues/4
# Report: an AverageMeter created before the loop received the raw loss tensor each step; its running sum kept the graph and the run crashed after thousands of steps.
import torch


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def train_one_epoch(model, criterion, loader, optimizer):
    loss_meter = AverageMeter()
    for x, target in loader:
        x, target = x.cuda(), target.cuda()
        out = model(x)
        out_criterion = criterion(out, target)
        optimizer.zero_grad()
        out_criterion["loss"].backward()
        optimizer.step()
        loss_meter.update(out_criterion["loss"])  # expect: TML001
    return loss_meter.avg
