# Source: https://github.com/baal-org/baal/blob/7da1cfbb0bf3220492fc571af4f0a1277c915cea/baal/modelwrapper.py
# Report: baal's ModelWrapper.train_on_batch hands the criterion's loss (graph still attached) to _update_metrics; the Loss metric's update() appends it to a list that lives until the next epoch's reset
# Shape: train_on_batch -> self._update_metrics(output, target, loss) -> metric.update(loss) -> self.loss.append(loss); every batch's loss tensor and its grad_fn chain stay alive for the whole epoch
# Expect: TML001 line 73
from collections import defaultdict

import torch
from torch.utils.data import DataLoader


class Loss:
    """Averages the per-batch losses of one epoch (as in baal.utils.metrics)."""

    def __init__(self, average=True):
        self._average = average
        self.reset()

    def reset(self):
        self.loss = list()

    def update(self, output=None, target=None):
        self.loss.append(output)

    @property
    def value(self):
        result = torch.stack([torch.as_tensor(v, dtype=torch.float) for v in self.loss])
        return result.mean().item() if self._average else result


class ModelWrapper:
    def __init__(self, model, criterion, optimizer, batch_size=32, epoch=1, use_cuda=True):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.epoch = epoch
        self.use_cuda = use_cuda
        self.metrics = dict()
        self.active_learning_metrics = defaultdict(dict)
        self.metrics["train_loss"] = Loss()
        self.metrics["test_loss"] = Loss()

    def _reset_metrics(self, filter=""):
        for name, metric in self.metrics.items():
            if filter in name:
                metric.reset()

    def _update_metrics(self, out, target, loss, filter=""):
        for name, metric in self.metrics.items():
            if filter in name and "loss" in name:
                metric.update(loss)

    def train_on_dataset(self, dataset):
        self.model.train()
        history = []
        for _ in range(self.epoch):
            self._reset_metrics("train")
            for data, target, *_ in DataLoader(dataset, self.batch_size, True, num_workers=4):
                _ = self.train_on_batch(data, target)
            history.append(self.metrics["train_loss"].value)
        self.optimizer.zero_grad()
        self.active_learning_metrics[len(dataset)]["train_loss"] = history[-1]
        return history

    def train_on_batch(self, data, target):
        if self.use_cuda:
            data, target = data.cuda(), target.cuda()
        self.optimizer.zero_grad()
        output = self.model(data)
        loss = self.criterion(output, target)
        loss.backward()
        self.optimizer.step()
        self._update_metrics(output, target, loss, filter="train")  # expect: TML001
        return loss

    def predict_on_batch(self, data, iterations=1):
        with torch.no_grad():
            if self.use_cuda:
                data = data.cuda()
            out = [self.model(data) for _ in range(iterations)]
            return torch.stack(out, dim=-1)

    def predict_on_dataset(self, dataset, iterations):
        self.model.eval()
        preds = []
        for data, *_ in DataLoader(dataset, self.batch_size, False, num_workers=4):
            pred = self.predict_on_batch(data, iterations)
            preds.append(pred.detach().cpu().numpy())
        return preds
