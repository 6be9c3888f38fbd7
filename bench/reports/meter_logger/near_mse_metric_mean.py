# Source: https://github.com/pytorchbearer/torchbearer/issues/506
# Report: the MSE metric leaked memory during fitting because its per-batch squared error was computed from y_pred with the graph attached and then summed into the epoch mean aggregator
# Shape: the fix: MeanSquaredError.process() returns `.data` of the squared error, so the Mean wrapper only ever adds graph-free tensors into self._sum
# Expect: near-miss: must be silent
import torch
from torch import nn

Y_PRED, Y_TRUE, LOSS = "y_pred", "y_true", "loss"


class Metric:
    def __init__(self, name):
        self.name = name

    def process(self, state):
        raise NotImplementedError

    def reset(self, state):
        pass


class Mean(Metric):
    """Wraps a metric and averages its per-sample values over the epoch."""

    def __init__(self, root):
        super().__init__(root.name)
        self.root = root

    def process(self, state):
        value = self.root.process(state)
        self._sum += value.sum()
        self._count += value.numel()
        return self._sum / self._count

    def reset(self, state):
        self._sum = 0.0
        self._count = 0


class MeanSquaredError(Metric):
    def __init__(self, pred_key=Y_PRED, target_key=Y_TRUE):
        super().__init__("mse")
        self.pred_key = pred_key
        self.target_key = target_key

    def process(self, state):
        y_pred = state[self.pred_key]
        y_true = state[self.target_key]
        return torch.pow(y_pred - y_true.view_as(y_pred), 2).data


def fit_epoch(model: nn.Module, loader, criterion, optimizer, metrics):
    state = {}
    for m in metrics:
        m.reset(state)
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        state[Y_PRED] = model(x)
        state[Y_TRUE] = y
        state[LOSS] = criterion(state[Y_PRED], y)
        state[LOSS].backward()
        optimizer.step()
        logs = {m.name: m.process(state) for m in metrics}
    return {k: float(v) for k, v in logs.items()}
