# Source: https://github.com/jrzaurin/pytorch-widedeep/blob/04428d7edcf2c8ef5c4ef7e7654a0aee09feec9d/pytorch_widedeep/metrics.py
# Report: audited correct idiom: the stateful R2Score metric is fed the still-attached training predictions every step and keeps its running sums with .item(); the counters are reset only at epoch begin by MetricCallback (R2Score; called from Trainer._train_step in pytorch_widedeep/training/trainer.py)
# Shape: as in the repository: R2Score.__call__ keeps self.numerator += (...).sum().item(), so the attached y_pred handed to self.metric in _train_step is reduced to a Python float inside the metric (the MultipleMetrics/_get_score hops of the original are collapsed into one self.metric call)
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch import Tensor


class Metric(object):
    def __init__(self):
        self._name = ""

    def reset(self):
        raise NotImplementedError("Custom Metrics must implement this function")

    def __call__(self, y_pred: Tensor, y_true: Tensor):
        raise NotImplementedError("Custom Metrics must implement this function")


class R2Score(Metric):
    def __init__(self):
        super().__init__()
        self._name = "r2"
        self.reset()

    def reset(self):
        self.numerator = 0
        self.num_examples = 0
        self.y_true_sum = 0

    def __call__(self, y_pred: Tensor, y_true: Tensor) -> np.ndarray:
        self.numerator += ((y_pred - y_true) ** 2).sum().item()
        self.num_examples += y_true.shape[0]
        self.y_true_sum += y_true.sum().item()
        y_true_avg = self.y_true_sum / self.num_examples
        self.denominator = ((y_true - y_true_avg) ** 2).sum().item()
        return 1 - (self.numerator / self.denominator)


class Trainer:
    def __init__(self, model, objective, optimizer, loss_fn, device="cuda"):
        self.model = model.to(device)
        self.objective = objective
        self.optimizer = optimizer
        self.loss_fn = loss_fn
        self.device = device
        self.metric = R2Score()
        self.train_running_loss = 0.0
        self.valid_running_loss = 0.0

    def _train_step(self, data, target: Tensor, batch_idx: int):
        self.model.train()
        X = {k: v.to(self.device) for k, v in data.items()}
        y = target.view(-1, 1).float() if self.objective != "multiclass" else target
        y = y.to(self.device)

        self.optimizer.zero_grad()
        y_pred = self.model(X)
        loss = self.loss_fn(y_pred, y)
        score = self.metric(y_pred, y)
        loss.backward()
        self.optimizer.step()

        self.train_running_loss += loss.item()
        avg_loss = self.train_running_loss / (batch_idx + 1)
        return score, avg_loss

    def fit(self, train_loader, n_epochs=1):
        for epoch in range(n_epochs):
            self.metric.reset()
            self.train_running_loss = 0.0
            for batch_idx, (data, target) in enumerate(train_loader):
                train_score, train_loss = self._train_step(data, target, batch_idx)
            print("epoch {} loss {:.4f} r2 {:.4f}".format(epoch + 1, train_loss, float(train_score)))
