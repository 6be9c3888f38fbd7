# Source: https://github.com/idptools/parrot/blob/0bf68a64e31a7c70036bdf13bd1f5dc772fdc5d1/parrot/brnn_architecture.py
# Report: audit of PARROT's Lightning BRNN (protein / IDR sequence regression): training_step appends the raw loss tensor to self.train_step_losses for the epoch-end mean, so every step's graph-attached loss stays on the GPU until on_train_epoch_end
# Shape: same module and epoch-end mean, but the list only receives a Python float made by a small helper (detach + item) before the loss is returned to Lightning
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import pytorch_lightning as pl
from torch import optim
from torchmetrics import R2Score


def _as_float(value):
    """Scalar tensor -> Python float, with no autograd history."""
    return float(value.detach())


class SequenceRegressorBRNN(pl.LightningModule):
    """Bidirectional LSTM that maps a one-hot protein sequence to one value."""

    def __init__(self, input_size=20, lstm_hidden_size=64, num_lstm_layers=2,
                 num_classes=1, learn_rate=1e-3, momentum=0.99):
        super().__init__()
        self.lstm = nn.LSTM(input_size, lstm_hidden_size, num_lstm_layers,
                            batch_first=True, bidirectional=True)
        self.layer_norm = nn.LayerNorm(lstm_hidden_size * 2)
        self.output_layer = nn.Linear(lstm_hidden_size * 2, num_classes)
        self.criterion = nn.L1Loss(reduction="sum")
        self.r2_score = R2Score(compute_on_cpu=True)
        self.learn_rate = learn_rate
        self.momentum = momentum
        # epoch bookkeeping for the training loss (plain floats)
        self.train_step_losses = []
        self.save_hyperparameters()

    def forward(self, x):
        _, (h_n, _) = self.lstm(x)
        # last layer, forward and reverse directions
        out = torch.cat((h_n[-2], h_n[-1]), dim=-1)
        return self.output_layer(self.layer_norm(out))

    def training_step(self, batch, batch_idx):
        names, vectors, targets = batch
        outputs = self(vectors)
        loss = self.criterion(outputs, targets.float())
        self.train_step_losses.append(_as_float(loss))
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_end(self):
        epoch_mean = sum(self.train_step_losses) / max(len(self.train_step_losses), 1)
        self.log("epoch_train_loss", epoch_mean, prog_bar=True)
        self.train_step_losses.clear()

    def validation_step(self, batch, batch_idx):
        names, vectors, targets = batch
        outputs = self(vectors)
        loss = self.criterion(outputs, targets.float())
        self.r2_score(outputs.view(-1, 1), targets.float().view(-1, 1))
        self.log("epoch_val_rsquare", self.r2_score)
        self.log("epoch_val_loss", loss)
        return loss

    def configure_optimizers(self):
        return optim.SGD(self.parameters(), lr=self.learn_rate,
                         momentum=self.momentum, nesterov=True)


def fit(datamodule, max_epochs=50):
    model = SequenceRegressorBRNN()
    trainer = pl.Trainer(max_epochs=max_epochs, accelerator="gpu", devices=1)
    trainer.fit(model, datamodule=datamodule)
    return model
