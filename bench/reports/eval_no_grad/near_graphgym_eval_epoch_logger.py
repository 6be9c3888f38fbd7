# Source: https://github.com/snap-stanford/GraphGym/pull/11
# Report: fixed version of GraphGym's eval_epoch from the PR that adds torch.no_grad() before evaluation
# Shape: eval_epoch is decorated with @torch.no_grad(); the logger only receives detached CPU tensors and loss.item(), so nothing is attached or kept on the GPU
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F

DEVICE = "cuda"


class SplitLogger:
    """Per-split statistics, written once per epoch."""

    def __init__(self, name):
        self.name = name
        self._true, self._pred = [], []
        self._loss = 0.0
        self._size = 0
        self._time = 0.0

    def update_stats(self, true, pred, loss, lr, time_used):
        batch = true.shape[0]
        self._true.append(true)
        self._pred.append(pred)
        self._loss += loss * batch
        self._size += batch
        self._time += time_used
        self._lr = lr

    def write_epoch(self, epoch):
        true = torch.cat(self._true)
        pred = torch.cat(self._pred)
        acc = (pred.argmax(-1) == true).float().mean().item()
        print(f"{self.name} epoch {epoch}: loss={self._loss / self._size:.4f} acc={acc:.4f}")
        self._true, self._pred = [], []
        self._loss, self._size, self._time = 0.0, 0, 0.0


def compute_loss(pred, true):
    return F.cross_entropy(pred, true), F.softmax(pred, dim=-1)


def train_epoch(logger, loader, model, optimizer, scheduler):
    model.train()
    start = time.time()
    for batch in loader:
        optimizer.zero_grad()
        x, true = batch[0].to(DEVICE), batch[1].to(DEVICE)
        pred = model(x)
        loss, score = compute_loss(pred, true)
        loss.backward()
        optimizer.step()
        logger.update_stats(true.detach().cpu(), score.detach().cpu(), loss.item(),
                            scheduler.get_last_lr()[0], time.time() - start)
        start = time.time()
    scheduler.step()


@torch.no_grad()
def eval_epoch(logger, loader, model):
    model.eval()
    start = time.time()
    for batch in loader:
        x, true = batch[0].to(DEVICE), batch[1].to(DEVICE)
        pred = model(x)
        loss, score = compute_loss(pred, true)
        logger.update_stats(true.detach().cpu(), score.detach().cpu(), loss.item(),
                            0, time.time() - start)
        start = time.time()


def train(loggers, loaders, model, optimizer, scheduler, max_epoch, eval_period=1):
    for epoch in range(max_epoch):
        train_epoch(loggers[0], loaders[0], model, optimizer, scheduler)
        loggers[0].write_epoch(epoch)
        if epoch % eval_period == 0:
            for i in range(1, len(loaders)):
                eval_epoch(loggers[i], loaders[i], model)
                loggers[i].write_epoch(epoch)
