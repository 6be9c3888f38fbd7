# Source: https://github.com/Ls-m/Estimate-RR/commit/f9cc513ecba68bc100bd9094566ab22a7da19638
# Report: RR-estimation LightningModule keeps every step's loss in self.*_step_outputs for epoch-end averaging; the fix commit stores loss.detach().cpu() instead of the raw loss
# Shape: training_step appends a dict holding the graph-attached loss to a list on self that lives until on_train_epoch_end, so every step's graph is kept for the whole epoch; validation_step keeps one CUDA scalar per batch the same way
# Expect: TML001 line 42; TML004 line 64
import pytorch_lightning as pl
import torch
import torch.nn as nn


class FreqEncoder(nn.Module):
    def __init__(self, n_bins, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_bins, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())

    def forward(self, x):
        return self.net(x)


class RRLightningModule(pl.LightningModule):
    def __init__(self, time_model: nn.Module, n_freq_bins: int, lr: float = 1e-3):
        super().__init__()
        self.time_model = time_model
        self.freq_model = FreqEncoder(n_bins=n_freq_bins, hidden=32)
        self.head = nn.Sequential(nn.Linear(64 + 32, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 1))
        self.criterion = nn.MSELoss()
        self.lr = lr
        self.training_step_outputs = []
        self.validation_step_outputs = []

    def forward(self, ppg, freq):
        t = self.time_model(ppg)
        f = self.freq_model(freq)
        return self.head(torch.cat([t, f], dim=1)).squeeze(-1)

    def training_step(self, batch, batch_idx):
        ppg, rr, freq = batch
        rr_pred = self.forward(ppg, freq).squeeze(-1)
        loss = self.criterion(rr_pred, rr)
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True)

        # kept for the epoch-end summary
        self.training_step_outputs.append({  # expect: TML001
            "train_loss": loss,
            "pred": rr_pred.detach().cpu(),
            "target": rr.detach().cpu(),
        })
        return loss

    def on_train_epoch_end(self):
        if not self.training_step_outputs:
            return
        avg_loss = torch.stack([x["train_loss"] for x in self.training_step_outputs]).mean()
        preds = torch.cat([x["pred"] for x in self.training_step_outputs], dim=0)
        targets = torch.cat([x["target"] for x in self.training_step_outputs], dim=0)
        self.log("train_loss_epoch", avg_loss, sync_dist=True)
        self.log("train_mae", torch.mean(torch.abs(preds - targets)), sync_dist=True)
        self.training_step_outputs.clear()

    def validation_step(self, batch, batch_idx):
        ppg, rr, freq = batch
        rr_pred = self.forward(ppg, freq).squeeze(-1)
        loss = self.criterion(rr_pred, rr)
        self.log("val_loss", loss, on_step=True, on_epoch=True, prog_bar=True)
        self.validation_step_outputs.append({  # expect: TML004
            "val_loss": loss,
            "pred": rr_pred.detach().cpu(),
            "target": rr.detach().cpu(),
        })
        return loss

    def on_validation_epoch_end(self):
        if not self.validation_step_outputs:
            return
        avg_loss = torch.stack([x["val_loss"] for x in self.validation_step_outputs]).mean()
        preds = torch.cat([x["pred"] for x in self.validation_step_outputs], dim=0)
        targets = torch.cat([x["target"] for x in self.validation_step_outputs], dim=0)
        self.log("val_loss_epoch", avg_loss, sync_dist=True)
        self.log("val_mae", torch.mean(torch.abs(preds - targets)), sync_dist=True)
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-5)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.1)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler}}
