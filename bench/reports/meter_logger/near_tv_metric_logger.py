# Source: https://github.com/pytorch/vision/blob/227111b6dfb0bdaa20f208823fa84becdb1fd76e/references/detection/utils.py
# Report: torchvision detection reference: train_one_epoch hands the (single-GPU: still graph-attached) reduced losses to MetricLogger.update, which converts every tensor with .item() before SmoothedValue keeps it
# Shape: the reference idiom: the graph-attached losses travel through **kwargs into a persistent logger, but the logger stores only Python floats (bounded deque + float total)
# Expect: near-miss: must be silent
import math
import sys
from collections import defaultdict, deque

import torch
import torch.distributed as dist


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.deque.append(value)
        self.count += n
        self.total += value * n

    @property
    def global_avg(self):
        return self.total / self.count


def reduce_dict(input_dict, average=True):
    world_size = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = sorted(input_dict.keys())
        values = torch.stack([input_dict[k] for k in names], dim=0)
        dist.all_reduce(values)
        if average:
            values /= world_size
        return {k: v for k, v in zip(names, values)}


class MetricLogger:
    def __init__(self, delimiter="\t"):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            assert isinstance(v, (float, int))
            self.meters[k].update(v)


def train_one_epoch(model, optimizer, data_loader, device, epoch):
    model.train()
    metric_logger = MetricLogger(delimiter="  ")
    for images, targets in data_loader:
        images = [image.to(device) for image in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())
        loss_dict_reduced = reduce_dict(loss_dict)
        losses_reduced = sum(loss for loss in loss_dict_reduced.values())
        loss_value = losses_reduced.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            sys.exit(1)

        optimizer.zero_grad()
        losses.backward()
        optimizer.step()

        metric_logger.update(loss=losses_reduced, **loss_dict_reduced)
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])
    return metric_logger
