# Source: https://github.com/ray-project/ray/pull/38039
# Report: porting a LightningModule to Lightning 2.0 moved validation_epoch_end outputs into self.validation_step_outputs; the review pointed out the list was never cleared, so every epoch's per-step GPU tensors piled up
# Shape: fixed variant: per-step results are stored as Python floats and the list is cleared at the end of every validation epoch
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch import nn


class LinearClassifier(pl.LightningModule):
    def __init__(self, input_dim=784, num_classes=10, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(input_dim, 256), nn.ReLU(), nn.Linear(256, num_classes))
        self.validation_step_outputs = []

    def forward(self, x):
        return self.net(x.view(x.size(0), -1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(dim=1) == y).float().mean()
        result = {"val_loss": loss.item(), "val_accuracy": acc.item()}
        self.validation_step_outputs.append(result)
        return result

    def on_validation_epoch_end(self):
        avg_loss = torch.tensor([x["val_loss"] for x in self.validation_step_outputs]).mean()
        avg_acc = torch.tensor([x["val_accuracy"] for x in self.validation_step_outputs]).mean()
        self.log("ptl/val_loss", avg_loss)
        self.log("ptl/val_accuracy", avg_acc)
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
