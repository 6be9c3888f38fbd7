# Source: https://github.com/wdoppenberg/ellipse-rcnn/issues/13
# Report: Issue asks whether the Lightning validation_step computes gradients because it calls self.train(True) to make the R-CNN return its loss dict; Lightning already runs validation_step with grad disabled.
# Shape: correct code: validation_step switches the module to train mode, reads the loss dict returned by forward, sums its values and logs them; the framework calls validation_step under no_grad, so nothing is kept with a graph.
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
from torch import nn


class TinyEllipseRCNN(nn.Module):
    """Stand-in detector: in train mode forward returns a dict of losses."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.cls_head = nn.Linear(32, 2)
        self.ellipse_head = nn.Linear(32, 5)

    def forward(self, images, targets=None):
        feats = self.backbone(images).flatten(1)
        logits, params = self.cls_head(feats), self.ellipse_head(feats)
        if self.training:
            return {
                "loss_classifier": nn.functional.cross_entropy(logits, targets["labels"]),
                "loss_ellipse": nn.functional.smooth_l1_loss(params, targets["ellipses"]),
            }
        return {"scores": logits.softmax(-1), "ellipses": params}


class EllipseRCNNLightning(TinyEllipseRCNN, pl.LightningModule):
    def __init__(self, lr=1e-4, weight_decay=1e-4):
        super().__init__()
        self.lr = lr
        self.weight_decay = weight_decay

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=self.weight_decay, amsgrad=True)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val/loss_total"}}

    def training_step(self, batch, batch_idx=0):
        images, targets = batch
        loss_dict = self(images, targets)
        self.log_dict({f"train/{k}": v for k, v in loss_dict.items()}, prog_bar=True, on_step=True)
        loss = sum(loss_dict.values())
        self.log("train/loss_total", loss, prog_bar=True, on_step=True)
        return loss

    def validation_step(self, batch, batch_idx=0):
        self.train(True)
        images, targets = batch
        loss_dict = self(images, targets)
        self.log_dict({f"val/{k}": v for k, v in loss_dict.items()}, on_step=False, on_epoch=True)
        val_loss = sum(loss_dict.values())
        self.log("val/loss_total", val_loss, prog_bar=True, on_step=False, on_epoch=True)
        self.log("lr", self.lr_schedulers().get_last_lr()[0])
        return val_loss
