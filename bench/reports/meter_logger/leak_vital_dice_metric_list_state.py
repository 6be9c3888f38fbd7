# Source: https://github.com/vitalab/vital/blob/master/vital/metrics/train/metric.py
# Report: vital's segmentation systems train with a DifferentiableDiceCoefficient Metric used as the Dice loss term; its list state collected every batch's differentiable Dice, and with the Lightning 1.0 Metric base (forward -> update with grad on) GPU memory ran out within an epoch (Lightning issue #4098)
# Shape: training_step -> _shared_step -> self._dice(y_hat, y) -> Metric.forward -> update(), which appends the graph-attached Dice of the batch to self.dice_by_steps; the list lives on the LightningModule and is only cleared by reset(), so every batch's graph stays reachable
# Expect: TML001 line 79
from typing import Dict

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def differentiable_dice_score(input: Tensor, target: Tensor, bg: bool = False, eps: float = 1e-6) -> Tensor:
    probs = F.softmax(input, dim=1)
    onehot = F.one_hot(target, num_classes=input.shape[1]).permute(0, 3, 1, 2).float()
    if not bg:
        probs, onehot = probs[:, 1:], onehot[:, 1:]
    inter = (probs * onehot).sum(dim=(0, 2, 3))
    union = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
    return (2 * inter + eps) / (union + eps)


class Metric(nn.Module):
    """Minimal stand-in for the Lightning 1.0 Metric base: forward() updates the epoch state, then returns the batch value."""

    def __init__(self):
        super().__init__()
        self._defaults = {}

    def add_state(self, name, default):
        self._defaults[name] = default
        setattr(self, name, list(default) if isinstance(default, list) else default.clone())

    def forward(self, *args):
        self.update(*args)
        return self.batch_value(*args)

    def reset(self):
        for name, default in self._defaults.items():
            setattr(self, name, [] if isinstance(default, list) else default.clone())


class DifferentiableDiceCoefficient(Metric):
    def __init__(self, include_background: bool = False):
        super().__init__()
        self.include_background = include_background
        self.add_state("dice_by_steps", [])

    def update(self, input: Tensor, target: Tensor) -> None:
        self.dice_by_steps += [differentiable_dice_score(input, target, bg=self.include_background)]

    def batch_value(self, input: Tensor, target: Tensor) -> Tensor:
        return differentiable_dice_score(input, target, bg=self.include_background)

    def compute(self) -> Tensor:
        return torch.mean(torch.stack(self.dice_by_steps), 0)


class SegmentationSystem(pl.LightningModule):
    def __init__(self, in_ch=1, n_classes=4, cross_entropy_weight=0.1, dice_weight=1.0, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.model = nn.Sequential(
            nn.Conv2d(in_ch, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
            nn.Conv2d(32, n_classes, 1))
        self._dice = DifferentiableDiceCoefficient(include_background=False)

    def forward(self, x):
        return self.model(x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    def _shared_step(self, batch: Dict[str, Tensor], batch_idx: int) -> Dict[str, Tensor]:
        x, y = batch["img"], batch["gt"]
        y_hat = self.model(x)
        ce = F.cross_entropy(y_hat, y)
        dice_values = self._dice(y_hat, y)  # expect: TML001
        mean_dice = dice_values.mean()
        loss = self.hparams.cross_entropy_weight * ce + self.hparams.dice_weight * (1 - mean_dice)
        return {"loss": loss, "ce": ce.detach(), "dice": mean_dice.detach()}

    def training_step(self, batch, batch_idx):
        result = self._shared_step(batch, batch_idx)
        self.log_dict({f"train/{k}": v for k, v in result.items()})
        return result["loss"]

    def validation_step(self, batch, batch_idx):
        result = self._shared_step(batch, batch_idx)
        self.log_dict({f"val/{k}": v for k, v in result.items()})
