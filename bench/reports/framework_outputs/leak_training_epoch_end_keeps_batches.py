# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/15514
# Report: implementing training_epoch_end ran out of memory: the loop accumulates every training_step output for the epoch, and the step returned {"loss": loss, "x": x} with a large x.
# Shape: training_step returns the loss plus the batch targets and predictions; training_epoch_end is overridden, so Lightning keeps every step's dict (the predictions with their graph).
# Expect: TML017 line 19
import pytorch_lightning as pl
import torch
import torch.nn as nn


class Forecaster(pl.LightningModule):
    def __init__(self, hidden=256, horizon=24):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(168, hidden), nn.ReLU(), nn.Linear(hidden, horizon))

    def training_step(self, batch, batch_idx):
        history, target = batch
        prediction = self.net(history)
        loss = nn.functional.l1_loss(prediction, target)
        return {"loss": loss, "prediction": prediction, "target": target}  # expect: TML017

    def training_epoch_end(self, outputs):
        predictions = torch.cat([o["prediction"] for o in outputs])
        targets = torch.cat([o["target"] for o in outputs])
        self.log("train_mape", ((predictions - targets).abs() / targets.abs().clamp(min=1e-3)).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
