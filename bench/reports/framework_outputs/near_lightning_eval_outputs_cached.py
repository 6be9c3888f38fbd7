# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/5735
# Report: the evaluation loop caches the outputs of every validation_step (run_evaluation keeps them in evaluation_loop.outputs) and only resets them at the start of the next validation epoch, so the whole val set's returned tensors stay on the GPU during training
# Shape: same module, but validation_step feeds a binned torchmetrics AUROC (thresholds=200: fixed-size state, reset each epoch) and returns nothing, so the loop has nothing to cache
# Expect: near-miss: must be silent
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchmetrics


class LesionClassifier(pl.LightningModule):
    def __init__(self, backbone: nn.Module, num_classes: int = 2, lr: float = 3e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        self.backbone = backbone
        self.head = nn.Linear(backbone.out_features, num_classes)
        self.val_auroc = torchmetrics.AUROC(task="binary", thresholds=200)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        images, targets = batch["image"], batch["label"]
        logits = self(images)
        loss = F.cross_entropy(logits, targets)
        self.log("train/loss", loss, on_step=True, prog_bar=True)
        return loss

    def _shared_eval(self, batch):
        images, targets = batch["image"], batch["label"]
        logits = self(images)
        loss = F.cross_entropy(logits, targets)
        return {"loss": loss, "probs": logits.softmax(dim=-1), "targets": targets}

    def validation_step(self, batch, batch_idx):
        result = self._shared_eval(batch)
        self.log("val/loss", result["loss"], on_epoch=True, sync_dist=True)
        self.val_auroc.update(result["probs"][:, 1], result["targets"])

    def on_validation_epoch_end(self):
        self.log("val/auroc", self.val_auroc.compute())
        self.val_auroc.reset()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
