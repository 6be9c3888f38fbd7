# Source: https://github.com/Shreeyak/pytorch-lightning-segmentation-template/issues/43
# Report: the LightningModule returned predictions and input images from its step methods so a logging callback could draw them; Lightning kept every returned dict for the epoch-end hook and GPU memory grew over the epoch.
# Shape: fixed variant (as in the template's fix): metrics go through self.log, nothing is returned from validation_step, and only one small CPU sample for the callback is kept on an attribute that is overwritten.
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from pytorch_lightning.callbacks import Callback
from torchvision.utils import make_grid


class DeepLabSeg(pl.LightningModule):
    def __init__(self, net, num_classes=21, lr=1e-3, n_viz=4):
        super().__init__()
        self.net = net
        self.num_classes = num_classes
        self.lr = lr
        self.n_viz = n_viz
        self.val_viz = None

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
        self.log("val/loss", loss, on_step=False, on_epoch=True)
        self.log("val/iou", self._mean_iou(preds, labels), on_step=False, on_epoch=True)
        if batch_idx == 0:
            self.val_viz = {
                "rgb": inputs[: self.n_viz].cpu(),
                "preds": preds[: self.n_viz].cpu(),
            }

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
    def on_validation_epoch_end(self, trainer, pl_module):
        viz = pl_module.val_viz
        if viz is not None:
            grid = make_grid(viz["rgb"], nrow=4)
            trainer.logger.experiment.add_image("val/rgb", grid, trainer.global_step)
