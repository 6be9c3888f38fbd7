# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8453
# Report: memory stays constant when validation_step returns nothing and the values are logged instead.
# Shape: same model; validation_step logs per-step scalars and returns None, so nothing is kept by the framework.
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
import torch.nn as nn


class SegModel(pl.LightningModule):
    def __init__(self, net: nn.Module, classes=21):
        super().__init__()
        self.net = net
        self.classes = classes

    def training_step(self, batch, batch_idx):
        images, masks = batch
        return nn.functional.cross_entropy(self.net(images), masks)

    def validation_step(self, batch, batch_idx):
        images, masks = batch
        logits = self.net(images)
        self.log("val_loss", nn.functional.cross_entropy(logits, masks), on_epoch=True)
        self.log("val_pixel_acc", (logits.argmax(1) == masks).float().mean(), on_epoch=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
