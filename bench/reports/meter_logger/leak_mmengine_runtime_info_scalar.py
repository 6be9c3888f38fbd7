# Source: https://github.com/open-mmlab/mmengine/blob/07c3f13b9605cd69d84ce99024f14c8a71c94fb6/mmengine/hooks/runtime_info_hook.py
# Report: mmengine's RuntimeInfoHook pushes every value of train_step's log_vars into the MessageHub each iteration; upstream MessageHub._get_valid_value calls .item() on tensors, here it keeps tensors "to avoid a sync per iteration"
# Shape: parse_losses() returns log_vars whose values (loss_cls, loss_bbox, summed 'loss') are graph-attached; after_train_iter hands them to message_hub.update_scalar, whose HistoryBuffer appends them for the whole run
# Expect: TML001 line 81
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn


class HistoryBuffer:
    def __init__(self, log_history=None, count_history=None, max_length=1000000):
        self.max_length = max_length
        self._log_history = list(log_history or [])
        self._count_history = list(count_history or [])

    def update(self, log_val, count=1):
        self._log_history.append(log_val)
        self._count_history.append(count)

    def mean(self, window_size=None):
        logs = self._log_history[-window_size:] if window_size else self._log_history
        return float(sum(float(v) for v in logs) / max(len(logs), 1))


class MessageHub:
    def __init__(self, name=""):
        self._log_scalars = OrderedDict()
        self._runtime_info = OrderedDict()

    def update_info(self, key, value):
        self._runtime_info[key] = value

    def _get_valid_value(self, value):
        # tensors are kept as they are; .item() is deferred to the logger so that
        # training does not synchronise with the device every iteration
        if isinstance(value, np.ndarray):
            assert value.size == 1
            value = value.item()
        return value

    def update_scalar(self, key, value, count=1):
        checked_value = self._get_valid_value(value)
        if key in self._log_scalars:
            self._log_scalars[key].update(checked_value, count)
        else:
            self._log_scalars[key] = HistoryBuffer([checked_value], [count])


class BaseDetector(nn.Module):
    def parse_losses(self, losses):
        log_vars = []
        for loss_name, loss_value in losses.items():
            if isinstance(loss_value, torch.Tensor):
                log_vars.append([loss_name, loss_value.mean()])
            else:
                log_vars.append([loss_name, sum(_loss.mean() for _loss in loss_value)])
        loss = sum(value for key, value in log_vars if "loss" in key)
        log_vars.insert(0, ["loss", loss])
        return loss, OrderedDict(log_vars)

    def train_step(self, data, optim_wrapper):
        losses = self.loss(data["inputs"], data["data_samples"])
        parsed_losses, log_vars = self.parse_losses(losses)
        optim_wrapper.update_params(parsed_losses)
        return log_vars


class RuntimeInfoHook:
    priority = "VERY_HIGH"

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        runner.message_hub.update_info("iter", runner.iter)
        for name, lr in runner.optim_wrapper.get_lr().items():
            runner.message_hub.update_scalar(f"train/{name}", lr[0])

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if outputs is not None:
            for key, value in outputs.items():
                runner.message_hub.update_scalar(f"train/{key}", value)  # expect: TML001


class IterBasedTrainLoop:
    def __init__(self, runner, dataloader, max_iters):
        self.runner = runner
        self.dataloader = dataloader
        self.max_iters = max_iters

    def run(self):
        data_iter = iter(self.dataloader)
        while self.runner.iter < self.max_iters:
            data_batch = next(data_iter)
            self.run_iter(data_batch)

    def run_iter(self, data_batch):
        self.runner.call_hook("before_train_iter", batch_idx=self.runner.iter, data_batch=data_batch)
        outputs = self.runner.model.train_step(data_batch, optim_wrapper=self.runner.optim_wrapper)
        self.runner.call_hook("after_train_iter", batch_idx=self.runner.iter, data_batch=data_batch, outputs=outputs)
        self.runner.iter += 1
