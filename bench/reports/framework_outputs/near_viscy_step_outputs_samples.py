# Source: https://github.com/mehta-lab/VisCy/pull/71
# Report: VSUNet keeps a few (source, target, prediction) images per epoch in self.training_step_outputs / self.validation_step_outputs to log a grid; review of PR #71 asks whether those kept tensors need detaching
# Shape: training_step/validation_step extend the self lists with _detach_sample(...), a helper that turns each kept slice into img[i].detach().cpu().numpy(); the lists are emptied in on_*_epoch_end, so nothing holds a graph or GPU storage
# Expect: near-miss: must be silent
from typing import Sequence

import numpy as np
import torch
from lightning.pytorch import LightningModule
from torch import nn


class StainingUNet(LightningModule):
    def __init__(self, net: nn.Module, lr: float = 1e-3,
                 log_batches_per_epoch: int = 8, log_samples_per_batch: int = 1):
        super().__init__()
        self.model = net
        self.loss_function = nn.MSELoss()
        self.lr = lr
        self.log_batches_per_epoch = log_batches_per_epoch
        self.log_samples_per_batch = log_samples_per_batch
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        source, target = batch["source"], batch["target"]
        pred = self.forward(source)
        loss = self.loss_function(pred, target)
        self.log("loss/train", loss, on_step=True, on_epoch=True, prog_bar=True)
        if batch_idx < self.log_batches_per_epoch:
            self.training_step_outputs.extend(
                self._detach_sample((source, target, pred))
            )
        return loss

    def validation_step(self, batch, batch_idx):
        source, target = batch["source"], batch["target"]
        pred = self.forward(source)
        loss = self.loss_function(pred, target)
        self.log("loss/validate", loss, sync_dist=True)
        if batch_idx < self.log_batches_per_epoch:
            self.validation_step_outputs.extend(
                self._detach_sample((source, target, pred))
            )

    def on_train_epoch_end(self):
        self._log_samples("train_samples", self.training_step_outputs)
        self.training_step_outputs = []

    def on_validation_epoch_end(self):
        self._log_samples("val_samples", self.validation_step_outputs)
        self.validation_step_outputs = []

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr=self.lr)

    def _detach_sample(self, imgs: Sequence[torch.Tensor]):
        num_samples = min(imgs[0].shape[0], self.log_samples_per_batch)
        return [
            [np.squeeze(img[i].detach().cpu().numpy().max(axis=1)) for img in imgs]
            for i in range(num_samples)
        ]

    def _log_samples(self, key, rows):
        grid = np.concatenate(
            [np.concatenate([im / (im.max() + 1e-8) for im in row], axis=1) for row in rows],
            axis=0,
        )
        self.logger.experiment.add_image(key, grid, self.current_epoch, dataformats="HW")
