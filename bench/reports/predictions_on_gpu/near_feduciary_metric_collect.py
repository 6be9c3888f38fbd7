# Source: https://github.com/asimukaye/feduciary/blob/05659684b4a196ba4db0644fd5eefae00cd5dad9/src/client/baseclient.py
# Report: federated-learning client passes every batch's raw model outputs to a MetricManager whose metric objects keep them until the epoch is summarized
# Shape: mm.track(loss.item(), outputs, targets) -> BaseMetric.collect() stores pred.detach().cpu(), so only host copies without graph pile up until summarize(); the eval helper has no no_grad of its own but its only caller evaluate() is @torch.no_grad()
# Expect: near-miss: must be silent
from collections import defaultdict
from copy import deepcopy

import numpy as np
import torch
from sklearn.metrics import accuracy_score
from torch import Tensor
from torch.nn import Module
from torch.utils.data import DataLoader


class BaseMetric:
    def __init__(self):
        self.scores = []
        self.answers = []

    def collect(self, pred: Tensor, true: Tensor):
        p, t = pred.detach().cpu(), true.detach().cpu()
        self.scores.append(p)
        self.answers.append(t)


class Acc1(BaseMetric):
    def summarize(self):
        scores = torch.cat(self.scores)
        answers = torch.cat(self.answers).numpy()
        self.scores, self.answers = [], []
        return accuracy_score(answers, scores.argmax(-1).numpy())


class MetricManager:
    def __init__(self, metric_names, actor):
        self.metric_funcs = {name: Acc1() for name in metric_names}
        self.figures = defaultdict(int)
        self.actor = actor

    def track(self, loss, pred, true):
        self.figures["loss"] += loss * len(pred)
        for module in self.metric_funcs.values():
            module.collect(pred, true)

    def aggregate(self, total_len, epoch):
        out = {name: m.summarize() for name, m in self.metric_funcs.items()}
        out["loss"] = self.figures["loss"] / total_len
        out["epoch"] = epoch
        return out

    def flush(self):
        self.figures = defaultdict(int)


def model_eval_helper(model: Module, dataloader: DataLoader, device, criterion, mm: MetricManager):
    model.eval()
    model.to(device)
    for inputs, targets in dataloader:
        inputs, targets = inputs.to(device), targets.to(device)
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        mm.track(loss.item(), outputs, targets)
    result = mm.aggregate(len(dataloader.dataset), -1)
    mm.flush()
    return result


class BaseClient:
    def __init__(self, cfg, id_seed, dataset, model: Module):
        self.id = f"{id_seed:04}"
        self._model = deepcopy(model)
        self.cfg = deepcopy(cfg)
        self.training_set, self.test_set = dataset
        self.mm = MetricManager(self.cfg.eval_metrics, actor=self.id)
        self.criterion = self.cfg.criterion
        self.train_loader = DataLoader(self.training_set, batch_size=cfg.batch_size, shuffle=True)
        self.test_loader = DataLoader(self.test_set, batch_size=cfg.batch_size)
        self.optimizer = self.cfg.optimizer(self._model.parameters())

    def train(self):
        self._model.train()
        self._model.to(self.cfg.device)
        out_result = None
        for epoch in range(self.cfg.epochs):
            for inputs, targets in self.train_loader:
                inputs, targets = inputs.to(self.cfg.device), targets.to(self.cfg.device)
                self._model.zero_grad(set_to_none=True)
                outputs: Tensor = self._model(inputs)
                loss: Tensor = self.criterion(outputs, targets)
                loss.backward()
                self.optimizer.step()
                self.mm.track(loss.item(), outputs, targets)
            out_result = self.mm.aggregate(len(self.training_set), epoch)
            self.mm.flush()
        return out_result

    @torch.no_grad()
    def evaluate(self):
        return model_eval_helper(self._model, self.test_loader, self.cfg.device, self.criterion, self.mm)
