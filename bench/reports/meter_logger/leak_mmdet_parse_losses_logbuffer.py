# Source: https://github.com/open-mmlab/mmdetection/pull/2976
# Report: mmdetection's switch to EpochBasedRunner adds BaseDetector._parse_losses/train_step: every loss is summed and each log_vars entry is turned into a Python float with loss_value.item() before the runner hands log_vars to its LogBuffer, which keeps one entry per iteration in val_history until the epoch's clear()
# Shape: repository code with the safeguard removed: _parse_losses stores the loss tensors themselves in log_vars (the .item() is gone; the .data.clone() only runs under torch.distributed), train_step returns them in the outputs dict, and the runner passes them to LogBuffer.update, whose body appends them to val_history lists that outlive every iteration
# Expect: TML001 line 80
from collections import OrderedDict

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn


class LogBuffer:
    def __init__(self):
        self.val_history = OrderedDict()
        self.n_history = OrderedDict()
        self.output = OrderedDict()
        self.ready = False

    def clear(self):
        self.val_history.clear()
        self.n_history.clear()
        self.clear_output()

    def clear_output(self):
        self.output.clear()
        self.ready = False

    def update(self, vars, count=1):
        for key, var in vars.items():
            if key not in self.val_history:
                self.val_history[key] = []
                self.n_history[key] = []
            self.val_history[key].append(var)
            self.n_history[key].append(count)

    def average(self, n=0):
        for key in self.val_history:
            values = np.array([float(v) for v in self.val_history[key][-n:]])
            nums = np.array(self.n_history[key][-n:])
            self.output[key] = np.sum(values * nums) / np.sum(nums)
        self.ready = True


class BaseDetector(nn.Module):
    def _parse_losses(self, losses):
        log_vars = OrderedDict()
        for loss_name, loss_value in losses.items():
            if isinstance(loss_value, torch.Tensor):
                log_vars[loss_name] = loss_value.mean()
            elif isinstance(loss_value, list):
                log_vars[loss_name] = sum(_loss.mean() for _loss in loss_value)
        loss = sum(_value for _key, _value in log_vars.items() if "loss" in _key)
        log_vars["loss"] = loss
        for loss_name, loss_value in log_vars.items():
            if dist.is_available() and dist.is_initialized():
                loss_value = loss_value.data.clone()
                dist.all_reduce(loss_value.div_(dist.get_world_size()))
            log_vars[loss_name] = loss_value
        return loss, log_vars

    def train_step(self, data, optimizer):
        losses = self(**data)
        loss, log_vars = self._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data["img_metas"]))


class EpochBasedRunner:
    def __init__(self, model, optimizer, logger):
        self.model = model
        self.optimizer = optimizer
        self.logger = logger
        self.log_buffer = LogBuffer()

    def train(self, data_loader, epoch, interval=50):
        self.model.train()
        self.log_buffer.clear()
        for i, data_batch in enumerate(data_loader):
            outputs = self.model.train_step(data_batch, self.optimizer)
            self.log_buffer.update(outputs["log_vars"], outputs["num_samples"])  # expect: TML001
            self.optimizer.zero_grad()
            outputs["loss"].backward()
            self.optimizer.step()
            if (i + 1) % interval == 0:
                self.log_buffer.average(interval)
                self.logger.info("Epoch [%d][%d/%d] %s", epoch, i + 1, len(data_loader),
                                 dict(self.log_buffer.output))
                self.log_buffer.clear_output()
