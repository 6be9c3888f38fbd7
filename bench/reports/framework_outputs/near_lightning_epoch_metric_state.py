# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/15514
# Report: the advice in the thread: do not return large tensors from the step for epoch-end use; keep only what the epoch metric needs.
# Shape: training_step returns only the loss and updates two running sums (floats) for the epoch metric in on_train_epoch_end.
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
import torch.nn as nn


class Forecaster(pl.LightningModule):
    def __init__(self, hidden=256, horizon=24):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(168, hidden), nn.ReLU(), nn.Linear(hidden, horizon))
        self.abs_pct_sum = 0.0
        self.count = 0

    def training_step(self, batch, batch_idx):
        history, target = batch
        prediction = self.net(history)
        with torch.no_grad():
            ape = (prediction - target).abs() / target.abs().clamp(min=1e-3)
            self.abs_pct_sum += ape.sum().item()
            self.count += ape.numel()
        return nn.functional.l1_loss(prediction, target)

    def on_train_epoch_end(self):
        self.log("train_mape", self.abs_pct_sum / max(self.count, 1))
        self.abs_pct_sum, self.count = 0.0, 0

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
