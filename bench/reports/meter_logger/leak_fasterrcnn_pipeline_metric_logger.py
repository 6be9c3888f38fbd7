# Source: https://github.com/sovit-123/fasterrcnn-pytorch-training-pipeline/blob/0b3f5fb19548ba877421eed1ade4aa851e9c53e2/torch_utils/utils.py
# Report: audited Faster R-CNN training pipeline (torchvision detection references): train_one_epoch hands the loss dict to metric_logger.update every step; on one GPU reduce_dict returns the model's own graph-attached loss tensors, and only MetricLogger.update's `v = v.item()` keeps SmoothedValue from storing them
# Shape: MetricLogger.update without the tensor-to-float conversion: SmoothedValue keeps the tensor in its deque and folds it into self.total (total += value * n), so the running total chains every step's loss graph for the whole epoch
# Expect: TML001 line 85
import math
import sys
from collections import defaultdict, deque

import torch
import torch.distributed as dist


class SmoothedValue:
    def __init__(self, window_size=20, fmt=None):
        self.fmt = fmt or "{median:.4f} ({global_avg:.4f})"
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


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


def reduce_dict(input_dict, average=True):
    world_size = get_world_size()
    if world_size < 2:
        return input_dict
    with torch.inference_mode():
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
            self.meters[k].update(v)

    def add_meter(self, name, meter):
        self.meters[name] = meter


def train_one_epoch(model, optimizer, data_loader, device, epoch, train_loss_hist, scaler=None):
    model.train()
    metric_logger = MetricLogger(delimiter="  ")
    metric_logger.add_meter("lr", SmoothedValue(window_size=1, fmt="{value:.6f}"))
    batch_loss_list = []
    for images, targets in data_loader:
        images = list(image.to(device) for image in images)
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        with torch.cuda.amp.autocast(enabled=scaler is not None):
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

        metric_logger.update(loss=losses_reduced, **loss_dict_reduced)  # expect: TML001
        metric_logger.update(lr=optimizer.param_groups[0]["lr"])
        batch_loss_list.append(loss_value)
        train_loss_hist.send(loss_value)
    return metric_logger, batch_loss_list
