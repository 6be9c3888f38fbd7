# Source: https://github.com/madscort/psim/blob/7169cd4c376ffee341c7c79aa6752a25fd1396e7/src/models/CNN_basic_collection.py
# Report: audit: SequenceCNN.test_step keeps every test batch's labels and probabilities in self.test_outputs while they are still CUDA tensors; fixed here by moving each batch to host memory before keeping it
# Shape: same LightningModule and lazily created self.test_outputs; test_step stores y.cpu() and y_hat.cpu() in the dict, the step still returns the device tensors (Lightning drops them), and on_test_epoch_end concatenates on the CPU
# Expect: near-miss: must be silent
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import wandb
from sklearn.metrics import accuracy_score, f1_score, precision_score, roc_auc_score
from torchmetrics.functional import accuracy

from models.registry import MODEL_REGISTRY


class SequenceCNN(pl.LightningModule):
    def __init__(self, model, lr=1e-3, fold_num=None):
        super().__init__()
        self.model = MODEL_REGISTRY[model]()
        self.criterion = nn.BCEWithLogitsLoss()
        self.lr = lr
        self.fold_num = fold_num

    def forward(self, x):
        return self.model(x)

    def _preds_loss_acc(self, batch):
        x, y = batch
        logits = self(x)
        preds = (torch.sigmoid(logits) > 0.5).long()
        loss = self.criterion(logits, y.float())
        return preds, loss, accuracy(preds, y, "binary")

    def training_step(self, batch, batch_idx):
        _, loss, acc = self._preds_loss_acc(batch)
        self.log("train_loss", loss)
        self.log("train_acc", acc, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        preds, loss, acc = self._preds_loss_acc(batch)
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", acc, prog_bar=True)
        return preds

    def test_step(self, batch, batch_idx):
        x, y = batch
        y_hat = torch.sigmoid(self(x))
        if not hasattr(self, "test_outputs"):
            self.test_outputs = []
        self.test_outputs.append({"y_true": y.cpu(), "y_hat": y_hat.cpu()})
        return {"y_true": y, "y_hat": y_hat}

    def on_test_epoch_end(self):
        y_true = torch.cat([o["y_true"] for o in self.test_outputs])
        y_hat = torch.cat([o["y_hat"] for o in self.test_outputs])
        y_pred = (y_hat > 0.5).long()
        acc = accuracy_score(y_true, y_pred)
        f1 = f1_score(y_true, y_pred, average="binary")
        prec = precision_score(y_true, y_pred, average="binary")
        auc = roc_auc_score(y_true, y_hat)
        for name, value in (("test_acc", acc), ("test_f1", f1), ("test_precision", prec), ("test_auc", auc)):
            self.log(name, torch.tensor(value, dtype=torch.float32))
        probs = np.vstack((1 - y_hat.numpy(), y_hat.numpy())).T
        wandb.log({"roc": wandb.plot.roc_curve(y_true.numpy(), probs, labels=["Class 0", "Class 1"], classes_to_plot=[1])})
        del self.test_outputs

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.95 ** epoch)
        return {"optimizer": optimizer, "lr_scheduler": scheduler, "monitor": "val_loss"}
