# Source: https://github.com/TWK2022/TimeSeriesForecasting/blob/4278bd7b75db08cab42cff3d35c679ff2946d79c/block/model_ema.py
# Report: audited correct idiom: the forecasting trainer's EMA blends the live weights into a frozen copy in place under torch.no_grad() from state_dict()[k].detach(); this rewrite is the near-by bug where the shadow weights are rebuilt from the trainable parameters (state_dict(keep_vars=True)) outside no_grad
# Shape: the same rebinding EMA (shadow dict on self, rebuilt each step from its previous value) but the live weights are read with .detach(), so the shadow never holds a graph; no torch.no_grad() block, which a linter must not require here
# Expect: near-miss: must be silent
import copy
import math

import torch


class ModelEMA:
    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = copy.deepcopy(self._get_model(model)).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.shadow = {k: v.detach().clone() for k, v in self.ema.state_dict().items()
                       if v.dtype.is_floating_point}

    def update(self, model):
        self.updates += 1
        d = self.decay(self.updates)
        state_dict = self._get_model(model).state_dict(keep_vars=True)
        for k in self.shadow:
            self.shadow[k] = d * self.shadow[k] + (1 - d) * state_dict[k].detach()
        self.ema.load_state_dict(self.shadow, strict=False)

    def _get_model(self, model):
        if type(model) in (torch.nn.parallel.DataParallel, torch.nn.parallel.DistributedDataParallel):
            return model.module
        return model


def train_epoch(args, model, ema, train_dataloader, optimizer, loss):
    model.train()
    train_loss = 0
    for index, (series_batch, true_batch) in enumerate(train_dataloader):
        series_batch = series_batch.to(args.device, non_blocking=args.latch)
        true_batch = true_batch.to(args.device, non_blocking=args.latch)
        pred_batch = model(series_batch)
        loss_batch = loss(pred_batch, true_batch)
        loss_batch.backward()
        optimizer.step()
        optimizer.zero_grad()
        if args.ema:
            ema.update(model)
        train_loss += loss_batch.item()
    return train_loss / (index + 1)
