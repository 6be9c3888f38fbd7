# Source: https://github.com/sktime/pytorch-forecasting/pull/1924
# Report: the fix detaches the tensors in the log dict before it is appended to training_step_outputs.
# Shape: same shared step and epoch-end aggregation; the appended copy holds the detached loss, the returned dict keeps the loss Lightning backpropagates.
# Expect: near-miss: must be silent
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
        self.training_step_outputs.append({"loss": log["loss"].detach(), "n_samples": log["n_samples"]})
        return log

    def on_train_epoch_end(self):
        total = sum(out["loss"] * out["n_samples"] for out in self.training_step_outputs)
        count = sum(out["n_samples"] for out in self.training_step_outputs)
        self.log("train_loss_epoch", total / count)
        self.training_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)
