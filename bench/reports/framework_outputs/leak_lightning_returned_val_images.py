# Source: https://github.com/Shreeyak/pytorch-lightning-segmentation-template/issues/43
# Report: the LightningModule returned predictions and input images from its step methods so a logging callback could draw them; Lightning kept every returned dict for the epoch-end hook and GPU memory grew over the epoch.
# Shape: validation_step returns a dict of full-size device tensors (images, logits, labels) while validation_epoch_end is overridden, so the framework keeps every step's dict until the epoch ends.
# Expect: TML017 line 42
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from pytorch_lightning.callbacks import Callback
from torchvision.utils import make_grid


class DeepLabSeg(pl.LightningModule):
    def __init__(self, net, num_classes=21, lr=1e-3):
        super().__init__()
        self.net = net
        self.num_classes = num_classes
        self.lr = lr

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        inputs, labels = batch
        logits = self(inputs)
        loss = F.cross_entropy(logits, labels, ignore_index=255)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        inputs, labels = batch
        logits = self(inputs)
        loss = F.cross_entropy(logits, labels, ignore_index=255)
        preds = logits.argmax(dim=1)
        iou = self._mean_iou(preds, labels)
        outputs = {
            "val_loss": loss,
            "val_iou": iou,
            "rgb": inputs,
            "logits": logits,
            "labels": labels,
        }
        return outputs  # expect: TML017

    def validation_epoch_end(self, outputs):
        avg_loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        avg_iou = torch.stack([o["val_iou"] for o in outputs]).mean()
        self.log("val/loss", avg_loss)
        self.log("val/iou", avg_iou)

    def _mean_iou(self, preds, labels):
        ious = torch.stack([
            ((preds == c) & (labels == c)).sum().float()
            / ((preds == c) | (labels == c)).sum().float().clamp(min=1)
            for c in range(self.num_classes)
        ])
        return ious.mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class LogMedia(Callback):
    def __init__(self, every_n_batches=50):
        self.every_n_batches = every_n_batches

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        if batch_idx % self.every_n_batches == 0:
            grid = make_grid(outputs["rgb"][:4].cpu(), nrow=4)
            trainer.logger.experiment.add_image("val/rgb", grid, trainer.global_step)
