# Modelled on: https://github.com/OpenNMT/OpenNMT-py/issues/1141
# Report: near-miss: Lightning runs validation_step under no_grad itself, so no explicit context is needed.
import pytorch_lightning as pl
import torch.nn.functional as F


class LitClassifier(pl.LightningModule):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.backbone(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.backbone(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(1) == y).float().mean())
