# Source: https://github.com/Lightning-AI/pytorch-lightning/pull/16520
# Report: Lightning 2.0 removed the *_epoch_end(outputs) hooks because the loop had to retain every step's outputs; the migration guide moves that storage into the user's module (self.validation_step_outputs.append(...), cleared at epoch end)
# Shape: migrated LightningModule appends each validation batch's CUDA logits / targets to self.validation_step_outputs and only clears them in on_validation_epoch_end, so the whole val set sits on the GPU
# Expect: TML004 line 42
import lightning.pytorch as L
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegmentationModule(L.LightningModule):
    def __init__(self, net: nn.Module, num_classes: int, lr: float = 1e-3):
        super().__init__()
        self.net = net
        self.num_classes = num_classes
        self.lr = lr
        self.validation_step_outputs = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def _confusion(self, pred, target):
        idx = target.flatten() * self.num_classes + pred.flatten()
        return torch.bincount(idx, minlength=self.num_classes ** 2).reshape(self.num_classes, self.num_classes)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.log("val_loss", loss, on_epoch=True)
        step_output = {
            "logits": logits,
            "target": y,
            "loss": loss,
        }
        self.validation_step_outputs.append(step_output)  # expect: TML004
        return loss

    def on_validation_epoch_end(self):
        preds = torch.cat([o["logits"].argmax(1) for o in self.validation_step_outputs])
        targets = torch.cat([o["target"] for o in self.validation_step_outputs])
        cm = self._confusion(preds, targets).float()
        iou = cm.diag() / (cm.sum(0) + cm.sum(1) - cm.diag()).clamp(min=1)
        self.log("val_miou", iou.mean())
        self.validation_step_outputs.clear()  # free memory

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
