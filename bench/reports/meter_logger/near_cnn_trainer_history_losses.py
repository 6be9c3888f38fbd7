# Source: https://github.com/oke-aditya/pytorch_cnn_trainer/pull/23
# Report: PR adding a Keras-like history object to the trainer; the repository's train_step reduces each batch loss with .item() into an AverageMeter and history keeps only per-epoch floats
# Shape: loss.item() goes into AverageMeter.update (self.sum += float); fit() appends the epoch averages (Python floats) to the history dict, so nothing graph-attached outlives a step
# Expect: near-miss: must be silent
import time
from collections import OrderedDict

import torch


class AverageMeter:
    """Running average of a scalar (val, sum, count, avg)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def topk_accuracy(output, target, topk=(1, 5)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0) * 100.0 / target.size(0) for k in topk]


def train_step(model, train_loader, criterion, device, optimizer, scheduler=None):
    model.train()
    top1_m = AverageMeter()
    top5_m = AverageMeter()
    losses_m = AverageMeter()
    for batch_idx, (inputs, target) in enumerate(train_loader):
        inputs = inputs.to(device)
        target = target.to(device)
        optimizer.zero_grad()
        output = model(inputs)
        loss = criterion(output, target)
        acc1, acc5 = topk_accuracy(output, target)
        top1_m.update(acc1.item(), output.size(0))
        top5_m.update(acc5.item(), output.size(0))
        losses_m.update(loss.item(), inputs.size(0))
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg), ("top5", top5_m.avg)])


def val_step(model, val_loader, criterion, device):
    model.eval()
    losses_m = AverageMeter()
    top1_m = AverageMeter()
    with torch.no_grad():
        for inputs, target in val_loader:
            inputs, target = inputs.to(device), target.to(device)
            output = model(inputs)
            loss = criterion(output, target)
            acc1, _ = topk_accuracy(output, target)
            losses_m.update(loss.item(), inputs.size(0))
            top1_m.update(acc1.item(), output.size(0))
    return OrderedDict([("loss", losses_m.avg), ("top1", top1_m.avg)])


def fit(epochs, model, train_loader, valid_loader, criterion, device, optimizer, scheduler=None):
    history = {"train": {"loss": [], "top1": [], "top5": []}, "val": {"loss": [], "top1": []}}
    for epoch in range(epochs):
        start = time.time()
        train_metrics = train_step(model, train_loader, criterion, device, optimizer, scheduler)
        valid_metrics = val_step(model, valid_loader, criterion, device)
        history["train"]["loss"].append(train_metrics["loss"])
        history["train"]["top1"].append(train_metrics["top1"])
        history["train"]["top5"].append(train_metrics["top5"])
        history["val"]["loss"].append(valid_metrics["loss"])
        history["val"]["top1"].append(valid_metrics["top1"])
        print(f"epoch {epoch} done in {time.time() - start:.1f}s")
    return history
