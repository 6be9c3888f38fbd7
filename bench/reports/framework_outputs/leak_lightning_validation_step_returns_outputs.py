# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/8453
# Report: evaluation_loop memory grew during validation; whatever validation_step returns is stored on the GPU for validation_epoch_end, and returning {"x": loss} plus outputs led to OOM.
# Shape: validation_step returns a dict with the logits and the loss, and validation_epoch_end (1.x API) receives every step's dict: the framework keeps them all.
# Expect: TML017 line 24
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
        loss = nn.functional.cross_entropy(logits, masks)
        return {"val_loss": loss, "logits": logits, "masks": masks}  # expect: TML017

    def validation_epoch_end(self, outputs):
        loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        preds = torch.cat([o["logits"].argmax(1) for o in outputs])
        masks = torch.cat([o["masks"] for o in outputs])
        self.log("val_loss", loss)
        self.log("val_pixel_acc", (preds == masks).float().mean())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
