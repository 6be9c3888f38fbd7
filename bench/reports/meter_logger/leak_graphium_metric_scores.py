# Source: https://github.com/datamol-io/graphium/pull/517
# Report: PR #517 (commit 911dfe95 "detaching preds") added .detach() in MetricToTorchMetrics.update; safeguard removed here, with a train summary that is only reset at epoch end
# Shape: training_step hands the graph-attached preds to the summary's update, which calls metric_obj.update, whose body appends self.metric(preds, target) (a loss value with its graph) to self.scores
# Expect: TML001 line 84

from typing import Dict, List, Union

import torch
from torch import Tensor
import pytorch_lightning as pl

from graphium.utils.tensor import nan_mean


class MetricToTorchMetrics:
    """Wrap any loss so it has the update/compute/reset API of a torchmetrics.Metric."""

    def __init__(self, metric):
        self.metric = metric
        self.scores: List[Tensor] = []

    def update(self, preds: Tensor, target: Tensor):
        self.scores.append(self.metric(preds, target))

    def compute(self):
        if len(self.scores) == 0:
            raise ValueError("No scores to compute")
        elif len(self.scores) == 1:
            return self.scores[0]
        return nan_mean(torch.stack(self.scores))

    def to(self, device: Union[str, torch.device]):
        for ii in range(len(self.scores)):
            self.scores[ii] = self.scores[ii].to(device)

    def reset(self):
        self.scores = []


class SingleTaskSummary:
    def __init__(self, metrics: Dict[str, MetricToTorchMetrics], task_name: str):
        self.metrics = metrics
        self.task_name = task_name

    def update(self, preds: Tensor, targets: Tensor) -> None:
        for metric_key, metric_obj in self.metrics.items():
            metric_obj.update(preds, targets)

    def compute(self) -> Dict[str, Tensor]:
        return {f"{self.task_name}/{k}": m.compute() for k, m in self.metrics.items()}

    def reset(self) -> None:
        for metric_obj in self.metrics.values():
            metric_obj.reset()


class PredictorModule(pl.LightningModule):
    def __init__(self, model: torch.nn.Module, loss_fun: Dict[str, torch.nn.Module]):
        super().__init__()
        self.model = model
        self.loss_fun = loss_fun
        self.tasks = list(loss_fun.keys())
        self.train_summary = {
            task: SingleTaskSummary({f"loss_{task}": MetricToTorchMetrics(loss_fun[task])}, task)
            for task in self.tasks
        }

    def forward(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
        return self.model(batch["features"])

    def _task_loss(self, pred: Tensor, target: Tensor, task: str) -> Tensor:
        target = target.to(dtype=pred.dtype)
        nans = torch.isnan(target)
        return self.loss_fun[task](pred[~nans], target[~nans])

    def training_step(self, batch: Dict[str, Tensor], batch_idx: int):
        preds = self.forward(batch)
        targets = batch.pop("labels")
        task_losses = [self._task_loss(preds[task], targets[task], task) for task in self.tasks]
        loss = torch.stack(task_losses).sum()

        for task in self.tasks:
            target = targets[task].to(dtype=preds[task].dtype)
            self.train_summary[task].update(preds[task], target)  # expect: TML001

        return {"loss": loss}

    def on_train_epoch_end(self) -> None:
        logs = {}
        for task in self.tasks:
            logs.update({k: v.item() for k, v in self.train_summary[task].compute().items()})
            self.train_summary[task].reset()
        self.log_dict(logs)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-4)
