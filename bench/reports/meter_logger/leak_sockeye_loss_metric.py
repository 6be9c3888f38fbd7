# Source: https://github.com/awslabs/sockeye/blob/0aef0769bda2cb4db53af0ed1ac31d65a499df02/sockeye/training_pt.py
# Report: audited sockeye training_pt.py PyTorchEarlyStoppingTrainer._step; removed the `.item()` calls in `loss_func.metric.update(loss_value.item(), num_samples.item())`
# Shape: the per-batch loss tensor returned by _forward_backward is handed to LossMetric.update, whose body does `self._sum += loss`; the metric lives on the loss function until the next checkpoint reset
# Expect: TML001 line 77

import logging
from abc import ABC
from typing import List

import torch

from . import constants as C
from . import utils

logger = logging.getLogger(__name__)


class LossMetric(ABC):
    def __init__(self, name: str) -> None:
        self._name = name
        self._sum = 0.0
        self._num_inst = 0.0

    @property
    def name(self):
        return self._name

    def update(self, loss, num_samples):
        self._sum += loss
        self._num_inst += num_samples

    def get(self) -> float:
        return self._sum / self._num_inst if self._num_inst else float('nan')

    def reset(self):
        self._sum = 0.0
        self._num_inst = 0.0


class PyTorchEarlyStoppingTrainer:

    def __init__(self, config, optimizer_config, traced_model, optimizer,
                 loss_functions: List, device: torch.device, using_amp: bool = False) -> None:
        self.config = config
        self.optimizer_config = optimizer_config
        self.traced_model = traced_model
        self.optimizer = optimizer
        self.loss_functions = loss_functions
        self.device = device
        self.using_amp = using_amp
        if using_amp:
            self._scaler = torch.cuda.amp.GradScaler()
        self.state = None

    def _forward_backward(self, batch):
        batch = batch.load(device=self.device)
        with torch.cuda.amp.autocast(cache_enabled=False) if self.using_amp else utils.no_context():
            outputs = self.traced_model(batch.source, batch.source_length, batch.target, batch.target_length)
            loss_outputs = [loss_function(outputs, batch.labels) for loss_function in self.loss_functions]
            loss_values = [v / self.config.update_interval if self.config.update_interval > 1
                           else v for v, _ in loss_outputs]
            sum_losses = sum(loss_values) if len(loss_values) > 1 else loss_values[0]
        if self.using_amp:
            sum_losses = self._scaler.scale(sum_losses)
        sum_losses.backward()
        return loss_outputs

    def _step(self, batch) -> bool:
        self.state.batches += 1
        self.state.samples += batch.samples
        is_update_batch = self.state.batches % self.config.update_interval == 0

        with self.traced_model.no_sync() if utils.is_distributed() and not is_update_batch else utils.no_context():
            loss_outputs = self._forward_backward(batch)

        for loss_func, (loss_value, num_samples) in zip(self.loss_functions, loss_outputs):
            loss_func.metric.update(loss_value, num_samples)  # expect: TML001

        did_grad_step = False
        if is_update_batch:
            self.state.updates += 1
            if self.using_amp:
                self._scaler.unscale_(self.optimizer)
            if self.optimizer_config.gradient_clipping_type == C.GRADIENT_CLIPPING_TYPE_NORM:
                torch.nn.utils.clip_grad.clip_grad_norm_(self.traced_model.parameters(),
                                                         self.optimizer_config.gradient_clipping_threshold)
            for param_group in self.optimizer.param_groups:
                param_group['lr'] = self.optimizer_config.lr_scheduler(self.state.updates)
            if self.using_amp:
                self._scaler.step(self.optimizer)
                self._scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            did_grad_step = True
        return did_grad_step

    def _log_train_metrics(self):
        logger.info('Checkpoint [%d]\t%s', self.state.checkpoint,
                    "\t".join("Train-%s=%f" % (lf.metric.name, lf.metric.get()) for lf in self.loss_functions))
        for lf in self.loss_functions:
            lf.metric.reset()
