# Source: https://github.com/divnori/rnaflow/blob/538f244fb2307dada36312c9b03388a4c3160e39/rnaflow/models/inverse_folding.py
# Report: audit: the inverse-folding LightningModule packs the attached cross-entropy from its shared step helper into an outputs dict and appends outputs["loss"] to self.epoch_losses every training_step, kept until on_train_epoch_end
# Shape: a helper returns (loss, recovery); training_step builds a dict and appends the dict's attached loss to a list on self that lives for the whole epoch
# Expect: TML001 line 39
import csv
import os

import lightning.pytorch as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class SequenceDesigner(pl.LightningModule):
    """Predicts a nucleotide per residue of an RNA backbone graph."""

    def __init__(self, encoder, num_tokens=4, smoothing=0.0, log_path="designer.csv"):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.out_dim, num_tokens)
        self.criterion = nn.CrossEntropyLoss(label_smoothing=smoothing)
        self.log_path = log_path
        self.epoch_losses = []
        self.epoch_recovery = []

    def _shared_step(self, batch):
        coords, node_mask, seq = batch["coords"], batch["mask"], batch["seq"]
        node_feats = self.encoder(coords, node_mask)
        logits = self.head(node_feats)[node_mask]
        target = seq[node_mask]
        loss = self.criterion(logits, target)
        sampled = F.gumbel_softmax(logits, tau=1.0, hard=True).argmax(dim=-1)
        recovery = (sampled == target).float().mean().item()
        return loss, recovery

    def training_step(self, batch, batch_idx):
        loss, recovery = self._shared_step(batch)
        outputs = {"loss": loss, "recovery": recovery}
        self.epoch_losses.append(outputs["loss"])  # expect: TML001
        self.epoch_recovery.append(outputs["recovery"])
        return outputs["loss"]

    def validation_step(self, batch, batch_idx):
        loss, recovery = self._shared_step(batch)
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_recovery", recovery)

    def on_train_epoch_end(self):
        mean_loss = torch.stack(self.epoch_losses).mean().item()
        mean_rec = sum(self.epoch_recovery) / len(self.epoch_recovery)
        self._write_row({"epoch": self.current_epoch, "loss": mean_loss, "recovery": mean_rec})
        self.epoch_losses = []
        self.epoch_recovery = []

    def _write_row(self, row):
        new_file = not os.path.exists(self.log_path)
        with open(self.log_path, "a", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(row))
            if new_file:
                writer.writeheader()
            writer.writerow(row)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def fit(encoder, datamodule, epochs=60):
    model = SequenceDesigner(encoder)
    trainer = pl.Trainer(max_epochs=epochs, accelerator="gpu", devices=1)
    trainer.fit(model, datamodule=datamodule)
    return model
