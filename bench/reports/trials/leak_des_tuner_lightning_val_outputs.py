# Source: https://github.com/RichardStaszkiewicz/CNN-Hyperparameter-Tuning/blob/709a4f8232e2a0281760aebe6413cf61f576ce3b/modules/plmodules.py
# Report: audit of a CNN hyper-parameter tuning project (DES / Ray Tune): every trial builds a fresh LightningModule whose validation_step appends a dict of the batch loss and accuracy (CUDA tensors) to self.validation_step_outputs, and on_validation_epoch_end stacks the list but never clears it, so each trial's list grows by one dict per validation batch for all of its epochs
# Shape: MNISTClassifier(pl.LightningModule) with ResNet-ish features + MLP head, torchmetrics Accuracy, validation_step_outputs list on self; run_trial() builds module + Trainer per config and returns the validated metric; objective(x) maps a DES population vector onto the config
# Expect: TML004 line 45
from datetime import timedelta

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn
from torchmetrics import Accuracy


class MNISTClassifier(pl.LightningModule):
    def __init__(self, config):
        super().__init__()
        width = config["channels"]
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(width * 16, config["mlp_out"]), nn.ReLU(),
                                  nn.Dropout(config["dropout"]), nn.Linear(config["mlp_out"], 10))
        self.accuracy = Accuracy("multiclass", num_classes=10)
        self.lr = config["lr"]
        self.validation_step_outputs = []

    def forward(self, x):
        return F.log_softmax(self.head(self.features(x)), dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        self.log("ptl/train_loss", loss)
        self.log("ptl/train_accuracy", self.accuracy(logits, y))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        accuracy = self.accuracy(logits, y)
        self.validation_step_outputs.append({"val_loss": loss, "val_accuracy": accuracy})  # expect: TML004
        return {"val_loss": loss, "val_accuracy": accuracy}

    def on_validation_epoch_end(self):
        avg_loss = torch.stack([o["val_loss"] for o in self.validation_step_outputs]).mean()
        avg_acc = torch.stack([o["val_accuracy"] for o in self.validation_step_outputs]).mean()
        self.log("ptl/val_loss", avg_loss)
        self.log("ptl/val_accuracy", avg_acc)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def run_trial(config, datamodule_factory, max_time=60, epochs=50):
    model = MNISTClassifier(config)
    dm = datamodule_factory(config["batch_size"])
    trainer = pl.Trainer(min_epochs=1, max_epochs=epochs, max_time=timedelta(seconds=max_time),
                         enable_checkpointing=False, logger=False)
    try:
        trainer.fit(model, dm)
        return trainer.validate(model, dm)
    except Exception as exc:
        print(exc)
        return [{"ptl/val_loss": np.inf}]


def make_objective(hp_names, metric, default_config, datamodule_factory, max_time=60):
    def objective(x):
        config = dict(default_config)
        config.update(dict(zip(hp_names, x)))
        config["batch_size"] = int(round(config["batch_size"]))
        config["mlp_out"] = int(round(config["mlp_out"]))
        return run_trial(config, datamodule_factory, max_time=max_time)[0][metric]
    return objective
