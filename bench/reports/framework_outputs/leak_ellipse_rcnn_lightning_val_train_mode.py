# Source: https://github.com/wdoppenberg/ellipse-rcnn/issues/13
# Report: Issue asks whether ellipse-rcnn's validation computes gradients since it calls self.train(True) to get the loss dict; the leak is that same validation moved into on_train_epoch_end, a hook Lightning does not run under no_grad.
# Shape: on_train_epoch_end loops over the val loader in train mode with grad enabled, sums the model's returned loss dict and appends each graph-attached sum to a list kept until the epoch-level mean: every val batch's activations stay alive.
# Expect: TML003 line 55; TML001 line 56
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

    def on_train_epoch_end(self):
        self.train(True)
        val_losses = []
        for images, targets in self.trainer.datamodule.val_dataloader():
            images = images.to(self.device)
            targets = {k: v.to(self.device) for k, v in targets.items()}
            loss_dict = self(images, targets)  # expect: TML003
            val_losses.append(sum(loss_dict.values()))  # expect: TML001
        val_loss = torch.stack(val_losses).mean()
        self.log("val/loss_total", val_loss, prog_bar=True)
        self.log("lr", self.lr_schedulers().get_last_lr()[0])
