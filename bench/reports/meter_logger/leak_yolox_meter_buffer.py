# Source: https://github.com/Megvii-BaseDetection/YOLOX/blob/13b39259366d6c47ce017c886b6c71c530e639ca/yolox/utils/metric.py
# Report: YOLOX MeterBuffer.update forwards every value unchanged to AverageMeter.update (self._total += value); fed the trainer's loss dict (**outputs) it keeps each step's graph-attached losses
# Shape: Trainer.train_one_iter calls self.meter.update(iter_time=..., lr=lr, **outputs); MeterBuffer.update -> AverageMeter.update where self._total += value keeps the tensor chain
# Expect: TML001 line 25

import functools
import time
from collections import defaultdict, deque

import numpy as np
import torch


class AverageMeter:
    """Track a series of values: windowed median/avg and the global average."""

    def __init__(self, window_size=50):
        self._deque = deque(maxlen=window_size)
        self._total = 0.0
        self._count = 0

    def update(self, value):
        self._deque.append(value)
        self._count += 1
        self._total += value  # expect: TML001

    @property
    def latest(self):
        return self._deque[-1] if len(self._deque) > 0 else None

    @property
    def global_avg(self):
        return self._total / max(self._count, 1e-5)

    def clear(self):
        self._deque.clear()


class MeterBuffer(defaultdict):
    """Computes and stores the average and current value of every logged key."""

    def __init__(self, window_size=20):
        factory = functools.partial(AverageMeter, window_size=window_size)
        super().__init__(factory)

    def get_filtered_meter(self, filter_key="time"):
        return {k: v for k, v in self.items() if filter_key in k}

    def update(self, values=None, **kwargs):
        if values is None:
            values = {}
        values.update(kwargs)
        for k, v in values.items():
            self[k].update(v)

    def clear_meters(self):
        for v in self.values():
            v.clear()


class Trainer:
    def __init__(self, exp, model, optimizer, lr_scheduler, train_loader, device):
        self.exp = exp
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.train_loader = train_loader
        self.device = device
        self.meter = MeterBuffer(window_size=exp.print_interval)
        self.iter = 0

    def train_one_iter(self, inps, targets):
        iter_start_time = time.time()
        inps = inps.to(self.device)
        targets = targets.to(self.device)
        targets.requires_grad = False
        data_end_time = time.time()

        outputs = self.model(inps, targets)
        loss = outputs["total_loss"]
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

        lr = self.lr_scheduler.update_lr(self.iter + 1)
        for param_group in self.optimizer.param_groups:
            param_group["lr"] = lr

        iter_end_time = time.time()
        self.meter.update(
            iter_time=iter_end_time - iter_start_time,
            data_time=data_end_time - iter_start_time,
            lr=lr,
            **outputs,
        )

    def train_in_iter(self):
        for self.iter, (inps, targets, _, _) in enumerate(self.train_loader):
            self.train_one_iter(inps, targets)
            if (self.iter + 1) % self.exp.print_interval == 0:
                loss_meter = self.meter.get_filtered_meter("loss")
                print(", ".join(f"{k}: {float(v.latest):.1f}" for k, v in loss_meter.items()))
                self.meter.clear_meters()
