# Source: https://github.com/victoresque/pytorch-template/issues/67
# Report: in the template's trainer, `self.train_metrics.update(met.__name__, met(output, target))` passes a metric that returns a tensor; memory grows after every batch because the tracker keeps extending the graph. Fix: return `.item()` from the metric.
# Shape: a MetricTracker object created once in the trainer; its update() adds the value into a running total; the per-batch metric function returns a graph-attached tensor.
# Expect: TML001 line 57
import torch
import torch.nn.functional as F


def smooth_l1(output, target):
    return F.smooth_l1_loss(output, target)


def rel_error(output, target):
    return ((output - target).abs() / (target.abs() + 1e-6)).mean()


class MetricTracker:
    def __init__(self, *keys):
        self._total = {k: 0.0 for k in keys}
        self._counts = {k: 0 for k in keys}

    def reset(self):
        for k in self._total:
            self._total[k] = 0.0
            self._counts[k] = 0

    def update(self, key, value, n=1):
        self._total[key] += value * n
        self._counts[key] += n

    def result(self):
        return {k: self._total[k] / max(self._counts[k], 1) for k in self._total}


class Trainer:
    def __init__(self, model, criterion, metric_ftns, optimizer, data_loader, device):
        self.model = model
        self.criterion = criterion
        self.metric_ftns = metric_ftns
        self.optimizer = optimizer
        self.data_loader = data_loader
        self.device = device
        self.train_metrics = MetricTracker("loss", *[m.__name__ for m in metric_ftns])

    def _train_epoch(self, epoch):
        self.model.train()
        self.train_metrics.reset()
        for batch_idx, (data, target) in enumerate(self.data_loader):
            data, target = data.to(self.device), target.to(self.device)
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.criterion(output, target)
            loss.backward()
            self.optimizer.step()
            self.train_metrics.update("loss", loss.item())
            for met in self.metric_ftns:
                self.train_metrics.update(met.__name__, met(output, target))  # expect: TML001
        return self.train_metrics.result()
