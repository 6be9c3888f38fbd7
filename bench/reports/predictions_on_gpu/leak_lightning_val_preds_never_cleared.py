# Source: https://github.com/behavioral-data/Homekit2020/issues/13
# Report: training for many epochs ran a 48 GB GPU out of memory; the leak was traced to the validation routine (metric bootstrapping at epoch end).
# Shape: validation_step keeps each batch's probabilities on the device in a list attribute used by the epoch-end bootstrap, and the list is never cleared, so it grows every epoch.
# Expect: TML004 line 28
import pytorch_lightning as pl
import torch
import torch.nn as nn


class FluPredictor(pl.LightningModule):
    def __init__(self, encoder: nn.Module, bootstraps=100):
        super().__init__()
        self.encoder = encoder
        self.bootstraps = bootstraps
        self.val_probs = []
        self.val_labels = []

    def forward(self, x):
        return self.encoder(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.binary_cross_entropy_with_logits(self(x), y.float())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        probs = torch.sigmoid(self(x))
        self.val_probs.append(probs)  # expect: TML004
        self.val_labels.append(y)

    def on_validation_epoch_end(self):
        probs = torch.cat(self.val_probs)
        labels = torch.cat(self.val_labels)
        scores = []
        for _ in range(self.bootstraps):
            idx = torch.randint(0, len(probs), (len(probs),), device=probs.device)
            scores.append(((probs[idx] > 0.5) == labels[idx].bool()).float().mean().item())
        self.log("val_acc_boot", sum(scores) / len(scores))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
