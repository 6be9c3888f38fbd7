# Source: https://github.com/JiseokSeo/nested-kfold-optuna-pytorch-lightning/blob/97a5a2b1e2a576945b77e1d9c99b3f2b12455b94/src/model_modules/multimodal_model.py
# Report: audit of a Lightning image+tabular model (nested k-fold / Optuna project): validation_step and test_step collect every batch's logits on self for the epoch-end loss/metrics; the repo stores logits.detach().cpu(), this is the variant it avoided, keeping the raw device logits so the whole val/test set's outputs sit on the GPU until epoch end
# Shape: validation_step/test_step append self(...) output to self.val_logits / self.test_logits; on_*_epoch_end concatenates, logs, clears; targets already go to the CPU, only the logits stay on the device
# Expect: TML004 line 37; TML004 line 53
import logging

import torch
import torch.nn as nn
import pytorch_lightning as pl

log = logging.getLogger(__name__)


class FusionClassifier(pl.LightningModule):
    def __init__(self, image_encoder, csv_encoder, hidden=256, lr=1e-3):
        super().__init__()
        self.save_hyperparameters(ignore=["image_encoder", "csv_encoder"])
        self.image_encoder = image_encoder
        self.csv_encoder = csv_encoder
        self.head = nn.Sequential(nn.LazyLinear(hidden), nn.ReLU(), nn.Dropout(0.2), nn.Linear(hidden, 1))
        self.criterion = nn.BCEWithLogitsLoss()
        self.val_logits, self.val_targets = [], []
        self.test_logits, self.test_targets = [], []

    def forward(self, image, csv):
        feats = torch.cat([self.image_encoder(image), self.csv_encoder(csv)], dim=1)
        return self.head(feats).squeeze(-1)

    def training_step(self, batch, batch_idx):
        logits = self(batch["image"], batch["csv"])
        loss = self.criterion(logits, batch["target"].float())
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        logits = self(batch["image"], batch["csv"])
        self.val_logits.append(logits)  # expect: TML004
        self.val_targets.append(batch["target"].cpu())

    def on_validation_epoch_end(self):
        if not self.val_logits:
            log.warning("no validation outputs this epoch")
            return
        all_logits = torch.cat(self.val_logits)
        all_targets = torch.cat(self.val_targets).to(all_logits.device)
        val_loss = self.criterion(all_logits, all_targets.float())
        self.log("val_loss", val_loss, prog_bar=True)
        self.val_logits.clear()
        self.val_targets.clear()

    def test_step(self, batch, batch_idx):
        logits = self(batch["image"], batch["csv"])
        self.test_logits.append(logits)  # expect: TML004
        self.test_targets.append(batch["target"].cpu())

    def on_test_epoch_end(self):
        logits = torch.cat(self.test_logits).float().cpu()
        targets = torch.cat(self.test_targets).float()
        preds = (logits.sigmoid() > 0.5).float()
        self.log("test_loss", self.criterion(logits, targets))
        self.log("test_acc", (preds == targets).float().mean())
        self.test_logits.clear()
        self.test_targets.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)
