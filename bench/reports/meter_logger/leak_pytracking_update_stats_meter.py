# Source: https://github.com/visionml/pytracking/pull/313
# Report: LTRTrainer._update_stats() passes stats values that are Tensors with gradients into AverageMeter, so the autograd graph accumulates during training and is never released.
# Shape: the actor returns a stats dict whose entries are live loss tensors; _update_stats hands each one to a per-loader AverageMeter whose `sum += val * n` chains every iteration's graph into the meter for the whole epoch.
# Expect: TML001 line 42
from collections import OrderedDict

import torch


class AverageMeter:
    def __init__(self):
        self.avg, self.val, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class IoUActor:
    def __init__(self, net, objective):
        self.net, self.objective = net, objective

    def __call__(self, data):
        iou_pred = self.net(data["train_images"], data["test_images"], data["test_proposals"])
        loss = self.objective(iou_pred, data["proposal_iou"])
        stats = {"Loss/total": loss, "Loss/iou": loss}
        return loss, stats


class LTRTrainer:
    def __init__(self, actor, optimizer):
        self.actor, self.optimizer = actor, optimizer
        self.stats = OrderedDict()

    def _update_stats(self, new_stats, batch_size, loader_name):
        if self.stats.get(loader_name) is None:
            self.stats[loader_name] = OrderedDict({name: AverageMeter() for name in new_stats})
        for name, val in new_stats.items():
            meter = self.stats[loader_name].setdefault(name, AverageMeter())
            meter.update(val, batch_size)  # expect: TML001

    def cycle_dataset(self, loader, name="train"):
        for i, data in enumerate(loader, 1):
            data = {k: v.cuda() for k, v in data.items()}
            loss, stats = self.actor(data)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self._update_stats(stats, loader.batch_size, name)
            if i % 10 == 0:
                print(name, {k: float(m.avg) for k, m in self.stats[name].items()})
