# Source: https://github.com/coqui-ai/Trainer/pull/87
# Report: coqui Trainer ("Fix loss detach" PR) routes every step's loss dict through _detach_loss_dict before it reaches the KeepAverage meter; this variant returns the raw loss dict from _optimize
# Shape: _optimize() returns the criterion's loss dict (graph-attached values) as a tuple member; train_step renames the keys into update_eval_values and hands it to KeepAverage.update_values, whose update_value folds each value into self.avg_values[name] for the whole epoch
# Expect: TML001 line 81
import time
from typing import Dict, Tuple

import torch


class KeepAverage:
    def __init__(self):
        self.avg_values = {}
        self.iters = {}

    def add_value(self, name, init_val=0, init_iter=0):
        self.avg_values[name] = init_val
        self.iters[name] = init_iter

    def update_value(self, name, value, weighted_avg=False):
        if name not in self.avg_values:
            self.add_value(name, init_val=value)
        elif weighted_avg:
            self.avg_values[name] = 0.99 * self.avg_values[name] + 0.01 * value
            self.iters[name] += 1
        else:
            self.avg_values[name] = self.avg_values[name] * self.iters[name] + value
            self.iters[name] += 1
            self.avg_values[name] /= self.iters[name]

    def update_values(self, value_dict):
        for key, value in value_dict.items():
            self.update_value(key, value)


class Trainer:
    def __init__(self, model, criterion, optimizer, config, train_loader):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.config = config
        self.train_loader = train_loader
        self.grad_accum_steps = config.grad_accum_steps
        self.keep_avg_train = None

    def _model_train_step(self, batch) -> Tuple[Dict, Dict]:
        return self.model.train_step(batch, self.criterion)

    def _optimize(self, batch, step_optimizer: bool) -> Tuple[Dict, Dict, float]:
        step_start_time = time.time()
        outputs, loss_dict = self._model_train_step(batch)
        loss_dict["loss"] = loss_dict["loss"] / float(self.grad_accum_steps)
        loss_dict["loss"].backward()
        grad_norm = 0
        if step_optimizer:
            grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_clip)
            self.optimizer.step()
        step_time = time.time() - step_start_time
        # losses for logging
        loss_dict["loss"] = loss_dict["loss"] * float(self.grad_accum_steps)
        if step_optimizer:
            loss_dict["grad_norm"] = grad_norm
            self.optimizer.zero_grad(set_to_none=True)
        return outputs, loss_dict, step_time

    def train_step(self, batch: Dict, batch_n_steps: int, step: int, loader_start_time: float):
        loader_time = time.time() - loader_start_time
        step_optimizer = True
        if ((step + 1) % self.grad_accum_steps != 0) and (step + 1 != batch_n_steps):
            step_optimizer = False

        loss_dict = {}
        outputs, loss_dict_new, step_time = self._optimize(batch, step_optimizer)
        loss_dict.update(loss_dict_new)

        self.keep_avg_train.update_values({"avg_loader_time": loader_time, "avg_step_time": step_time})

        update_eval_values = {}
        for key, value in loss_dict.items():
            update_eval_values["avg_" + key] = value
        self.keep_avg_train.update_values(update_eval_values)  # expect: TML001
        return outputs, loss_dict

    def train_epoch(self):
        self.model.train()
        self.keep_avg_train = KeepAverage()
        batch_n_steps = len(self.train_loader)
        loader_start_time = time.time()
        for cur_step, batch in enumerate(self.train_loader):
            self.train_step(batch, batch_n_steps, cur_step, loader_start_time)
            loader_start_time = time.time()
        return dict(self.keep_avg_train.avg_values)
