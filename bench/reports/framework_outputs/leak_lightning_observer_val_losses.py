# Source: https://github.com/meteofrance/py4cast/pull/29
# Report: a Lightning validation "observer" appended each batch's per-step error tensor to a list and only gathered/plotted it at epoch end; without .cpu() the list grew on the GPU over the validation set until OOM on large val/test sets.
# Shape: validation_step hands predictions to a plotter object whose update() computes the metric and appends the device tensor to self.losses[name]; the list is cleared only at epoch end.
# Expect: TML004 line 25
from typing import Dict

import pytorch_lightning as pl
import torch


def gather(obj, tensor):
    return obj.trainer.strategy.all_gather(tensor).flatten(0, 1)


class StateErrorPlot:
    """Per-variable error as a function of forecast step."""

    def __init__(self, metrics: Dict[str, torch.nn.Module], prefix: str = "Valid"):
        self.metrics = metrics
        self.prefix = prefix
        self.losses = {name: [] for name in metrics}

    def update(self, obj, prediction: torch.Tensor, target: torch.Tensor) -> None:
        for name in self.metrics:
            self.losses[name].append(self.metrics[name](prediction, target))  # expect: TML004

    def on_step_end(self, obj, label: str = "") -> None:
        for name in self.metrics:
            loss_tensor = gather(obj, torch.cat(self.losses[name], dim=0))
            if obj.trainer.is_global_zero:
                loss = torch.mean(loss_tensor, dim=0)
                for t in range(loss.shape[0]):
                    obj.logger.experiment.add_scalar(
                        f"{label}_{name}/timestep", loss[t].mean().item(), t + 1)
        for name in self.metrics:
            self.losses[name].clear()


class AutoRegressiveLightning(pl.LightningModule):
    def __init__(self, model, metrics, num_pred_steps=12, lr=1e-3):
        super().__init__()
        self.model = model
        self.num_pred_steps = num_pred_steps
        self.lr = lr
        self.loss = torch.nn.MSELoss()
        self.valid_plotters = [StateErrorPlot(metrics, prefix="Valid")]

    def forward(self, inputs, forcing):
        # the model rolls out all num_pred_steps internally: [B, T, ...]
        return self.model(inputs, forcing, num_steps=self.num_pred_steps)

    def validation_step(self, batch, batch_idx):
        inputs, forcing, target = batch
        prediction = self(inputs, forcing)
        self.log("val_loss", self.loss(prediction, target), sync_dist=True)
        for plotter in self.valid_plotters:
            plotter.update(self, prediction=prediction, target=target)

    def on_validation_epoch_end(self):
        for plotter in self.valid_plotters:
            plotter.on_step_end(self, label="Valid")

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
