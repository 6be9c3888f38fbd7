# Source: https://github.com/pytorchbearer/torchbearer/pull/533
# Report: metrics were fed the live training state (y_pred and loss still attached); the base Metric.process carried @no_grad but subclasses override process, so running metrics summed graph-attached losses and memory grew over very long epochs (fixed by passing state.data and no_grad on MetricList.process)
# Shape: a Trial loop hands its state dict to MetricList.process each step; the RunningLoss metric keeps self._sum += state[LOSS] in its own (undecorated) process override
# Expect: TML001 line 28
import torch
import torch.nn.functional as F

Y_PRED, Y_TRUE, LOSS, METRICS = "y_pred", "y_true", "loss", "metrics"


class Metric:
    def __init__(self, name):
        self.name = name

    @torch.no_grad()
    def process(self, state):
        pass

    def reset(self, state):
        pass


class RunningLoss(Metric):
    def reset(self, state):
        self._sum, self._count = 0.0, 0

    def process(self, state):
        self._sum += state[LOSS]  # expect: TML001
        self._count += 1
        return self._sum / self._count


class CategoricalAccuracy(Metric):
    def reset(self, state):
        self._correct, self._seen = 0, 0

    def process(self, state):
        self._correct += (state[Y_PRED].argmax(dim=1) == state[Y_TRUE]).sum().item()
        self._seen += state[Y_TRUE].size(0)
        return self._correct / max(self._seen, 1)


class MetricList(Metric):
    def __init__(self, metrics):
        super().__init__("metric_list")
        self.metrics = metrics

    def reset(self, state):
        for m in self.metrics:
            m.reset(state)

    def process(self, state):
        return {m.name: m.process(state) for m in self.metrics}


class Trial:
    def __init__(self, model, optimizer, metrics, device="cuda"):
        self.model, self.optimizer, self.device = model.to(device), optimizer, device
        self.metric_list = MetricList(metrics)

    def fit_epoch(self, loader):
        state = {}
        self.model.train()
        self.metric_list.reset(state)
        for x, y in loader:
            x, y = x.to(self.device), y.to(self.device)
            self.optimizer.zero_grad()
            state[Y_PRED] = self.model(x)
            state[Y_TRUE] = y
            state[LOSS] = F.cross_entropy(state[Y_PRED], y)
            state[LOSS].backward()
            self.optimizer.step()
            state[METRICS] = self.metric_list.process(state)
        return state[METRICS]
