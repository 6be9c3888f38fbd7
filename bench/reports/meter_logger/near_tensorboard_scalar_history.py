# Source: https://github.com/allenai/allennlp/pull/1423
# Report: the trainer handed raw loss tensors to its tensorboard logging helper; the fix calls .item() first so the logged scalars are detached from the graph instead of holding it
# Shape: same logger and trainer, but the loop logs loss.item(), so the history holds Python floats rather than tensors with a grad_fn
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class TensorboardLogger:
    def __init__(self, log_dir, every=50):
        self.writer = SummaryWriter(log_dir)
        self.every = every
        self.history = defaultdict(list)

    def log_scalar(self, tag, value, step):
        self.history[tag].append(value)
        if step % self.every == 0:
            self.writer.add_scalar(tag, value, step)

    def summary(self):
        return {tag: float(sum(vals) / len(vals)) for tag, vals in self.history.items()}

    def close(self):
        self.writer.close()


class Trainer:
    def __init__(self, model, optimizer, loader, log_dir, device="cuda", grad_clip=5.0):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.loader = loader
        self.device = device
        self.grad_clip = grad_clip
        self.criterion = nn.CrossEntropyLoss(ignore_index=0)
        self.tb = TensorboardLogger(log_dir)
        self.step = 0

    def _batch_loss(self, batch):
        tokens = batch["tokens"].to(self.device)
        tags = batch["tags"].to(self.device)
        logits = self.model(tokens)
        return self.criterion(logits.view(-1, logits.size(-1)), tags.view(-1))

    def train_epoch(self):
        self.model.train()
        for batch in self.loader:
            self.optimizer.zero_grad()
            loss = self._batch_loss(batch)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
            self.optimizer.step()
            self.step += 1
            self.tb.log_scalar("train/grad_norm", norm.item(), self.step)
            self.tb.log_scalar("train/lr", self.optimizer.param_groups[0]["lr"], self.step)
            self.tb.log_scalar("train/loss", loss.item(), self.step)

    def fit(self, epochs):
        for _ in range(epochs):
            self.train_epoch()
        stats = self.tb.summary()
        self.tb.close()
        return stats
