# Source: https://github.com/openpifpaf/openpifpaf/issues/123
# Report: User asks whether Trainer.train_batch's backward/step/zero_grad order is right; leak = the reading the question suggests: keep only the zero_grad before the batch loop and drop the one after step.
# Shape: train() zeroes gradients once per epoch, then train_batch() backpropagates and steps on every batch without any reset, so .grad keeps summing all earlier batches of the epoch (wrong updates; no memory growth, the sums happen in place).
# Expect: TML002 line 42
import copy
import logging
import time

import torch

LOG = logging.getLogger(__name__)


class Trainer:
    def __init__(self, model, loss, optimizer, *, lr_scheduler=None, device=None,
                 stride_apply=1, ema_decay=None, log_interval=10):
        self.model = model
        self.loss = loss
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.device = device
        self.stride_apply = stride_apply
        self.ema_decay = ema_decay
        self.ema = None
        self.log_interval = log_interval

    def step_ema(self):
        if self.ema is None:
            return
        for p, ema_p in zip(self.model.parameters(), self.ema):
            ema_p.mul_(1.0 - self.ema_decay).add_(p.data, alpha=self.ema_decay)

    def train_batch(self, data, targets, apply_gradients=True):
        if self.device:
            data = data.to(self.device, non_blocking=True)
            targets = [head.to(self.device, non_blocking=True) for head in targets]
        outputs = self.model(data)
        loss, head_losses = self.loss(outputs, targets)
        if loss is not None:
            loss.backward()
        if apply_gradients:
            self.optimizer.step()  # expect: TML002
            self.step_ema()
        return (
            float(loss.item()) if loss is not None else None,
            [float(l.item()) if l is not None else None for l in head_losses],
        )

    def val_batch(self, data, targets):
        if self.device:
            data = data.to(self.device, non_blocking=True)
            targets = [head.to(self.device, non_blocking=True) for head in targets]
        with torch.no_grad():
            outputs = self.model(data)
            loss, head_losses = self.loss(outputs, targets)
        return float(loss.item()) if loss is not None else None, [float(l.item()) for l in head_losses]

    def train(self, scenes, epoch):
        start_time = time.time()
        self.model.train()
        self.ema = None
        epoch_loss = 0.0
        self.optimizer.zero_grad()
        for batch_idx, (data, target, _) in enumerate(scenes):
            apply_gradients = batch_idx % self.stride_apply == 0
            loss, head_losses = self.train_batch(data, target, apply_gradients)
            if loss is not None:
                epoch_loss += loss
            if batch_idx % self.log_interval == 0:
                LOG.info({"epoch": epoch, "batch": batch_idx, "loss": round(loss, 3) if loss is not None else None,
                          "head_losses": [round(l, 3) if l is not None else None for l in head_losses]})
            if self.ema is None and self.ema_decay:
                self.ema = copy.deepcopy([p.data for p in self.model.parameters()])
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()
        LOG.info({"epoch": epoch + 1, "loss": round(epoch_loss / len(scenes), 5), "time": time.time() - start_time})

    def val(self, scenes, epoch):
        epoch_loss = 0.0
        for data, target, _ in scenes:
            loss, _ = self.val_batch(data, target)
            if loss is not None:
                epoch_loss += loss
        LOG.info({"type": "val-epoch", "epoch": epoch, "loss": round(epoch_loss / len(scenes), 5)})

    def loop(self, train_scenes, val_scenes, epochs):
        for epoch in range(epochs):
            self.train(train_scenes, epoch)
            self.val(val_scenes, epoch + 1)
