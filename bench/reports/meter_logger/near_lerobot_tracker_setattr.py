# Source: https://github.com/huggingface/lerobot/blob/7427f31801f944f5ec9ce53cda02862ce7d1638b/src/lerobot/scripts/lerobot_train.py
# Report: lerobot's update_policy() as in the repo: the loss and grad norm reach the MetricsTracker as Python floats via .item()
# Shape: MetricsTracker.__setattr__ forwards to AverageMeter.update (`self.sum += val * n`), but the value is a float, so the persistent meter keeps no graph
# Expect: near-miss: must be silent
import time

import torch
from accelerate import Accelerator


class AverageMeter:
    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class MetricsTracker:
    __keys__ = ["metrics", "steps"]

    def __init__(self, metrics, initial_step=0):
        self.__dict__.update(dict.fromkeys(self.__keys__))
        self.metrics = metrics
        self.steps = initial_step

    def __getattr__(self, name):
        if name in self.__dict__:
            return self.__dict__[name]
        if name in self.metrics:
            return self.metrics[name]
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name in self.__dict__:
            super().__setattr__(name, value)
        elif name in self.metrics:
            self.metrics[name].update(value)
        else:
            raise AttributeError(name)

    def step(self):
        self.steps += 1

    def reset_averages(self):
        for meter in self.metrics.values():
            meter.reset()


def update_policy(train_metrics, policy, batch, optimizer, grad_clip_norm, accelerator, lr_scheduler=None):
    start_time = time.perf_counter()
    policy.train()
    with accelerator.accumulate(policy):
        with accelerator.autocast():
            loss, output_dict = policy(batch)
        accelerator.backward(loss)
        grad_norm = None
        if accelerator.sync_gradients and grad_clip_norm > 0:
            grad_norm = accelerator.clip_grad_norm_(policy.parameters(), grad_clip_norm)
        optimizer.step()
        optimizer.zero_grad()
        if lr_scheduler is not None:
            lr_scheduler.step()

    train_metrics.loss = loss.item()
    if grad_norm is not None:
        train_metrics.grad_norm = grad_norm.item()
    train_metrics.lr = optimizer.param_groups[0]["lr"]
    train_metrics.update_s = time.perf_counter() - start_time
    return train_metrics, output_dict


def train(policy, dataloader, optimizer, lr_scheduler, cfg, logger):
    accelerator = Accelerator()
    policy, optimizer, dataloader = accelerator.prepare(policy, optimizer, dataloader)
    meters = {
        "loss": AverageMeter("loss", ":.3f"),
        "grad_norm": AverageMeter("grdn", ":.3f"),
        "lr": AverageMeter("lr", ":0.1e"),
        "update_s": AverageMeter("updt_s", ":.3f"),
    }
    train_tracker = MetricsTracker(meters, initial_step=0)
    step = 0
    for batch in dataloader:
        train_tracker, _ = update_policy(
            train_tracker, policy, batch, optimizer, cfg.grad_clip_norm,
            accelerator=accelerator, lr_scheduler=lr_scheduler,
        )
        step += 1
        train_tracker.step()
        if cfg.log_freq > 0 and step % cfg.log_freq == 0:
            logger.info(str({k: m.avg for k, m in train_tracker.metrics.items()}))
            train_tracker.reset_averages()
        if step >= cfg.steps:
            break
    return policy
