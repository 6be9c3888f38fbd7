# Source: https://github.com/HelmholtzAI-Consultants-Munich/Quicksetup-ai/pull/26
# Report: the merged fix returns only the loss from training_step by default.
# Shape: same shared step helper and overridden training_epoch_end; training_step returns the loss alone.
# Expect: near-miss: must be silent
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
        return {"loss": loss}

    def training_epoch_end(self, outputs):
        self.log("train/epochs_seen", float(self.current_epoch))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
