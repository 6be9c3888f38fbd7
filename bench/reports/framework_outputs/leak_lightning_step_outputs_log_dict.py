# Source: https://github.com/sktime/pytorch-forecasting/pull/1924
# Report: the base model appended each step's log dict, loss included and not detached, to training_step_outputs; every batch's graph stayed alive for the whole epoch and memory grew.
# Shape: a shared step method returns a log dict with the loss; training_step appends that dict to a list on self that is emptied only at epoch end.
# Expect: TML001 line 25
import lightning.pytorch as pl
import torch
import torch.nn as nn


class ForecastingModel(pl.LightningModule):
    def __init__(self, network: nn.Module, loss: nn.Module, learning_rate=1e-3):
        super().__init__()
        self.network, self.loss, self.learning_rate = network, loss, learning_rate
        self.training_step_outputs = []

    def step(self, x, y):
        prediction = self.network(x)
        loss = self.loss(prediction, y)
        self.log("train_loss", loss, on_step=True, prog_bar=True, batch_size=y.size(0))
        return {"loss": loss, "n_samples": y.size(0)}

    def training_step(self, batch, batch_idx):
        x, y = batch
        log = self.step(x, y)
        self.training_step_outputs.append(log)  # expect: TML001
        return log

    def on_train_epoch_end(self):
        total = sum(out["loss"] * out["n_samples"] for out in self.training_step_outputs)
        count = sum(out["n_samples"] for out in self.training_step_outputs)
        self.log("train_loss_epoch", total / count)
        self.training_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)
