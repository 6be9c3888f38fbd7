# Source: https://github.com/HelmholtzAI-Consultants-Munich/Quicksetup-ai/pull/26
# Report: the template's training_step returned predictions and targets next to the loss; with training_epoch_end implemented Lightning kept them all on the GPU until the epoch ended, and large images exceeded GPU memory.
# Shape: training_step delegates to a shared step helper returning (loss, preds, targets) and returns all three in its dict; training_epoch_end is overridden (1.x API), so every dict is kept.
# Expect: TML017 line 25
import pytorch_lightning as pl
import torch
import torch.nn as nn


class SegmentationModule(pl.LightningModule):
    def __init__(self, net: nn.Module, lr=1e-3):
        super().__init__()
        self.net, self.lr = net, lr
        self.criterion = nn.BCEWithLogitsLoss()

    def shared_step(self, batch):
        images, masks = batch
        logits = self.net(images)
        loss = self.criterion(logits, masks)
        return loss, torch.sigmoid(logits), masks

    def training_step(self, batch, batch_idx):
        loss, preds, targets = self.shared_step(batch)
        self.log("train/loss", loss, on_step=True)
        return {"loss": loss, "preds": preds, "targets": targets}  # expect: TML017

    def training_epoch_end(self, outputs):
        self.log("train/epochs_seen", float(self.current_epoch))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
