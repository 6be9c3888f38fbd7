# Source: https://github.com/noamzilo/sed-crnn/blob/2f42422dfaddf536da708202cad83869c29c60a9/crnn_lightning.py
# Report: audit of a sound-event-detection CRNN LightningModule: training_step and validation_step hand logits, targets and loss to a _collect helper that appends torch.sigmoid(logits) and y to per-mode lists on self ("still on GPU") until the epoch-end aggregation; only the loss was detached
# Shape: same call sites and buffers, but _collect itself detaches and moves predictions and targets to the CPU and keeps the loss as a float, so the per-epoch buffers hold host tensors only
# Expect: near-miss: must be silent
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn

import metrics


class FocalBCELoss(nn.Module):
    def __init__(self, alpha=0.25, gamma=2.0):
        super().__init__()
        self.alpha, self.gamma = alpha, gamma

    def forward(self, logits, targets):
        pt = torch.sigmoid(logits)
        pt = torch.where(targets == 1, pt, 1 - pt)
        return (-self.alpha * (1 - pt) ** self.gamma * torch.log(pt + 1e-12)).mean()


class CRNNLightning(pl.LightningModule):
    def __init__(self, backbone, lr=1e-3, weight_decay=1e-4, fps_out=50):
        super().__init__()
        self.model = backbone
        self.loss_fn = FocalBCELoss()
        self.lr, self.weight_decay, self.fps_out = lr, weight_decay, fps_out
        self._buf = {m: {"preds": [], "trues": [], "losses": []} for m in ("train", "val")}
        self.track = {"loss_tr": [], "loss_val": [], "f1_1s_tr": [], "f1_1s_val": []}

    def forward(self, x):
        return self.model(x)

    def _collect(self, logits, y, loss, mode):
        probs = torch.sigmoid(logits.detach())
        self._buf[mode]["preds"].append(probs.cpu())
        self._buf[mode]["trues"].append(y.cpu())
        self._buf[mode]["losses"].append(loss.item())

    def _aggregate(self, mode):
        p = torch.cat(self._buf[mode]["preds"]).numpy()
        t = torch.cat(self._buf[mode]["trues"]).numpy()
        loss = float(np.mean(self._buf[mode]["losses"]))
        for key in self._buf[mode]:
            self._buf[mode][key].clear()
        p_bin, t_bin = (p > 0.5).astype(np.uint8), t.astype(np.uint8)
        return {"loss": loss,
                "f1_frame": metrics.f1_overall_framewise(p_bin, t_bin),
                "f1_1s": metrics.f1_overall_1sec(p_bin, t_bin, self.fps_out)}

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = self.loss_fn(logits, y)
        self._collect(logits, y, loss, "train")
        self.log("train_loss", loss, on_epoch=True, prog_bar=True)
        return loss

    def on_train_epoch_end(self):
        tr = self._aggregate("train")
        self.track["loss_tr"].append(tr["loss"])
        self.track["f1_1s_tr"].append(tr["f1_1s"])

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = self.loss_fn(logits, y)
        self._collect(logits, y, loss, "val")
        self.log("val_loss", loss, on_epoch=True, prog_bar=True)

    def on_validation_epoch_end(self):
        val = self._aggregate("val")
        self.track["loss_val"].append(val["loss"])
        self.track["f1_1s_val"].append(val["f1_1s"])
        self.log("val_f1_1s", val["f1_1s"], prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=10)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "monitor": "val_loss"}}
