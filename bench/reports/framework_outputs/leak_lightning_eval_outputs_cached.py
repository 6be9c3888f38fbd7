# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/5735
# Report: the evaluation loop caches the outputs of every validation_step (run_evaluation keeps them in evaluation_loop.outputs) and only resets them at the start of the next validation epoch, so the whole val set's returned tensors stay on the GPU during training
# Shape: LightningModule (1.x API) whose validation_step returns a dict holding the per-batch CUDA logits, probabilities and targets for validation_epoch_end
# Expect: TML017 line 44
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import roc_auc_score


class LesionClassifier(pl.LightningModule):
    def __init__(self, backbone: nn.Module, num_classes: int = 2, lr: float = 3e-4):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        self.backbone = backbone
        self.head = nn.Linear(backbone.out_features, num_classes)

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
        return {
            "loss": loss,
            "logits": logits,
            "probs": logits.softmax(dim=-1),
            "targets": targets,
            "features": self.backbone(images),
        }

    def validation_step(self, batch, batch_idx):
        result = self._shared_eval(batch)
        self.log("val/loss", result["loss"], on_epoch=True, sync_dist=True)
        return result  # expect: TML017

    def validation_epoch_end(self, outputs):
        probs = torch.cat([o["probs"] for o in outputs]).float().cpu().numpy()
        targets = torch.cat([o["targets"] for o in outputs]).cpu().numpy()
        self.log("val/auroc", roc_auc_score(targets, probs[:, 1]))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
