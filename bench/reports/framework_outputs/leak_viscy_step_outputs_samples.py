# Source: https://github.com/mehta-lab/VisCy/pull/71
# Report: VSUNet keeps sample (source, target, prediction) images per epoch on self to log a grid (PR #71 review asks whether they need detaching); leak = the helper keeps the raw tensor slices (e.g. for make_grid) instead of .detach().cpu().numpy()
# Shape: training_step extends self.training_step_outputs with slices of pred (graph-attached: each kept batch pins its whole forward graph until epoch end); validation_step (Lightning runs it under no_grad) extends self.validation_step_outputs with GPU tensor slices
# Expect: TML001 line 34; TML004 line 43
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
            self.training_step_outputs.extend(self._take_sample((source, target, pred)))  # expect: TML001
        return loss

    def validation_step(self, batch, batch_idx):
        source, target = batch["source"], batch["target"]
        pred = self.forward(source)
        loss = self.loss_function(pred, target)
        self.log("loss/validate", loss, sync_dist=True)
        if batch_idx < self.log_batches_per_epoch:
            self.validation_step_outputs.extend(self._take_sample((source, target, pred)))  # expect: TML004

    def on_train_epoch_end(self):
        self._log_samples("train_samples", self.training_step_outputs)
        self.training_step_outputs = []

    def on_validation_epoch_end(self):
        self._log_samples("val_samples", self.validation_step_outputs)
        self.validation_step_outputs = []

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr=self.lr)

    def _take_sample(self, imgs: Sequence[torch.Tensor]):
        num_samples = min(imgs[0].shape[0], self.log_samples_per_batch)
        return [
            [img[i].amax(dim=1).squeeze() for img in imgs]
            for i in range(num_samples)
        ]

    def _log_samples(self, key, rows):
        grid = torch.cat(
            [torch.cat([im / (im.max() + 1e-8) for im in row], dim=1) for row in rows],
            dim=0,
        ).detach().float().cpu().numpy()
        self.logger.experiment.add_image(key, grid, self.current_epoch, dataformats="HW")
