# Source: https://github.com/Lightning-AI/pytorch-lightning/pull/4313
# Report: Metric states were accumulated from predictions that still carried autograd history, so every training step's graph stayed reachable from the metric and memory kept growing
# Shape: same Metric and sum states, but training_step feeds it detached predictions (the fix detaches what reaches the metric states)
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
from pytorch_lightning.metrics import Metric
from torch import nn


class MeanSquaredLogError(Metric):
    def __init__(self, dist_sync_on_step=False):
        super().__init__(dist_sync_on_step=dist_sync_on_step)
        self.add_state("sum_squared_log_error", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def _input_format(self, preds, target):
        preds = preds.clamp(min=0).squeeze(-1)
        return torch.log1p(preds), torch.log1p(target.float())

    def update(self, preds: torch.Tensor, target: torch.Tensor):
        log_preds, log_target = self._input_format(preds, target)
        sq = torch.pow(log_preds - log_target, 2)
        self.sum_squared_log_error += sq.sum()
        self.total += target.numel()

    def compute(self):
        return self.sum_squared_log_error / self.total


class Regressor(pl.LightningModule):
    def __init__(self, in_dim: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(), nn.Linear(64, 1))
        self.train_msle = MeanSquaredLogError()

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        preds = self(x)
        loss = nn.functional.mse_loss(preds.squeeze(-1), y)
        self.train_msle.update(preds.detach(), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("train_msle", self.train_msle.compute())
        self.train_msle.reset()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)
