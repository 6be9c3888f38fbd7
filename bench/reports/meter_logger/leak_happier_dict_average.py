# Source: https://github.com/elias-ramzi/HAPPIER/blob/5af91b3ac6c216a936232da33b42af7efaba5c6b/happier/engine/base_training_loop.py
# Report: hierarchical image-retrieval trainer logs every criterion's loss through a DictAverage of AverageMeters; here AverageMeter.update no longer routes values through the repository's _handle_types (detach().item()) helper
# Shape: the per-criterion entry of logs is the graph-attached loss returned by the helper; meter.update(logs) -> DictAverage -> AverageMeter.update does self.sum += val * n on an epoch-long meter, chaining every step's loss graph
# Expect: TML001 line 95
import math
import os

import torch
from tqdm import tqdm


def _handle_types(value):
    if hasattr(value, "detach"):
        try:
            value = value.detach().item()
        except ValueError:
            return None
    if math.isnan(value) or math.isinf(value):
        return None
    return value


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class DictAverage:
    def __init__(self):
        self.dict_avg = {}

    def update(self, dict_values, n=1):
        for key, item in dict_values.items():
            if key not in self.dict_avg:
                self.dict_avg[key] = AverageMeter()
            self.dict_avg[key].update(item, n)

    @property
    def avg(self):
        return {key: m.avg for key, m in self.dict_avg.items()}


def _loss_and_backward(net, batch, relevance_fn, criterion, scaler):
    with torch.cuda.amp.autocast(enabled=scaler is not None):
        emb = net(batch["image"].cuda())
        labels = batch["label"].cuda()
        logs = {}
        losses = []
        for crit, weight in criterion:
            loss = crit(emb, labels, relevance_fn=relevance_fn, indexes=batch["index"].cuda()).mean()
            losses.append(weight * loss)
            logs[f"{crit.__class__.__name__}_l{crit.hierarchy_level}"] = loss
    total_loss = sum(losses)
    if scaler is None:
        total_loss.backward()
    else:
        scaler.scale(total_loss).backward()
    logs["total_loss"] = total_loss.item()
    _ = [l.detach_() for l in losses]
    total_loss.detach_()
    return logs


def train_one_epoch(net, loader, criterion, optimizer, scheduler, scaler, clip_norm=None):
    meter = DictAverage()
    net.train()
    net.zero_grad()
    iterator = tqdm(loader, disable=os.getenv("TQDM_DISABLE"))
    for i, batch in enumerate(iterator):
        logs = _loss_and_backward(net, batch, loader.dataset.compute_relevance_on_the_fly, criterion, scaler)
        if clip_norm is not None:
            if scaler is not None:
                for opt in optimizer.values():
                    scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip_norm)
        for opt in optimizer.values():
            if scaler is None:
                opt.step()
            else:
                scaler.step(opt)
        net.zero_grad()
        for crit, _ in criterion:
            crit.zero_grad()
        for sch in scheduler["on_step"]:
            sch.step()
        if scaler is not None:
            scaler.update()
        meter.update(logs)  # expect: TML001
        iterator.set_postfix(meter.avg)
    return meter.avg
