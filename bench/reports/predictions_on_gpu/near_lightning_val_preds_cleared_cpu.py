# Source: https://github.com/behavioral-data/Homekit2020/issues/13
# Report: turning off the validation bootstraps stopped the leak; the bootstrap only needs this epoch's predictions, which can live on the CPU.
# Shape: same epoch-end bootstrap; predictions are kept as CPU copies and the lists are cleared at the end of each validation epoch.
# Expect: near-miss: must be silent
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
        self.val_probs.append(torch.sigmoid(self(x)).cpu())
        self.val_labels.append(y.cpu())

    def on_validation_epoch_end(self):
        probs = torch.cat(self.val_probs)
        labels = torch.cat(self.val_labels)
        scores = []
        for _ in range(self.bootstraps):
            idx = torch.randint(0, len(probs), (len(probs),))
            scores.append(((probs[idx] > 0.5) == labels[idx].bool()).float().mean().item())
        self.log("val_acc_boot", sum(scores) / len(scores))
        self.val_probs.clear()
        self.val_labels.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
