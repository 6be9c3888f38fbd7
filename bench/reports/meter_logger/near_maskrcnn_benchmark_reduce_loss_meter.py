# Source: https://github.com/facebookresearch/maskrcnn-benchmark/blob/910b7385a62d7bba7b3faa2145ef6ca67152c6d0/maskrcnn_benchmark/engine/trainer.py
# Report: Audited idiom: do_train logs reduce_loss_dict(loss_dict) through meters.update(loss=losses_reduced, **loss_dict_reduced); on one GPU reduce_loss_dict returns the graph-attached loss_dict unchanged, and it is MetricLogger.update that calls v.item() before SmoothedValue keeps it in an unbounded series list and a running total. (source note: MetricLogger: maskrcnn_benchmark/utils/metric_logger.py@072c41041e89dece0b9d98d3e44481a6a62fe082)
# Shape: As upstream: MetricLogger.update converts tensors with v.item() before storing, so the kwargs handed over are attached but nothing attached is kept.
# Expect: near-miss: must be silent

import datetime
import logging
import time
from collections import defaultdict, deque

import torch
import torch.distributed as dist


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


class SmoothedValue(object):
    """Window median plus a global average over the whole run."""

    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.series = []
        self.total = 0.0
        self.count = 0

    def update(self, value):
        self.deque.append(value)
        self.series.append(value)
        self.count += 1
        self.total += value

    @property
    def global_avg(self):
        return self.total / self.count


class MetricLogger(object):
    def __init__(self, delimiter="\t"):
        self.meters = defaultdict(SmoothedValue)
        self.delimiter = delimiter

    def update(self, **kwargs):
        for k, v in kwargs.items():
            if isinstance(v, torch.Tensor):
                v = v.item()
            assert isinstance(v, (float, int))
            self.meters[k].update(v)

    def __str__(self):
        return self.delimiter.join(
            "{}: {:.4f}".format(name, float(m.global_avg)) for name, m in self.meters.items()
        )


def reduce_loss_dict(loss_dict):
    """Average the losses over ranks for logging; single GPU returns the dict as is."""
    world_size = get_world_size()
    if world_size < 2:
        return loss_dict
    with torch.no_grad():
        names = sorted(loss_dict.keys())
        all_losses = torch.stack([loss_dict[k] for k in names], dim=0)
        dist.reduce(all_losses, dst=0)
        if dist.get_rank() == 0:
            all_losses /= world_size
        return {k: v for k, v in zip(names, all_losses)}


def do_train(model, data_loader, optimizer, scheduler, checkpointer, device, checkpoint_period, arguments):
    logger = logging.getLogger("maskrcnn_benchmark.trainer")
    meters = MetricLogger(delimiter="  ")
    max_iter = len(data_loader)
    start_iter = arguments["iteration"]
    model.train()
    end = time.time()
    for iteration, (images, targets, _) in enumerate(data_loader, start_iter):
        iteration = iteration + 1
        arguments["iteration"] = iteration
        scheduler.step()

        images = images.to(device)
        targets = [target.to(device) for target in targets]
        loss_dict = model(images, targets)
        losses = sum(loss for loss in loss_dict.values())

        loss_dict_reduced = reduce_loss_dict(loss_dict)
        losses_reduced = sum(loss for loss in loss_dict_reduced.values())
        meters.update(loss=losses_reduced, **loss_dict_reduced)

        optimizer.zero_grad()
        losses.backward()
        optimizer.step()

        batch_time = time.time() - end
        end = time.time()
        meters.update(time=batch_time)
        if iteration % 20 == 0 or iteration == max_iter:
            logger.info("iter: {}  {}  eta: {}".format(
                iteration, str(meters),
                str(datetime.timedelta(seconds=int(batch_time * (max_iter - iteration))))))
        if iteration % checkpoint_period == 0:
            checkpointer.save("model_{:07d}".format(iteration), **arguments)
