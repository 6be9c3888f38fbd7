# Source: https://github.com/Nixtla/neuralforecast/pull/507
# Report: self.validation_step_outputs kept every validation step's loss and was never cleared; the fix clears the list at the end of each validation epoch
# Shape: same module; the per-step losses are stacked and the list cleared in on_validation_epoch_end, so it never holds more than one epoch of scalars
# Expect: near-miss: must be silent
import numpy as np
import torch
import pytorch_lightning as pl


class WindowsForecaster(pl.LightningModule):
    def __init__(self, model, loss_fn, valid_batch_windows=256, lr=1e-3):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.valid_batch_windows = valid_batch_windows
        self.lr = lr
        self.validation_step_outputs = []

    def _windows(self, batch):
        series = batch["temporal"]
        return series.unfold(-1, self.model.input_size + self.model.h, 1).flatten(0, 1)

    def training_step(self, batch, batch_idx):
        windows = self._windows(batch)
        x, y = windows[:, : self.model.input_size], windows[:, self.model.input_size:]
        loss = self.loss_fn(self.model(x), y)
        self.log("train_loss", loss.detach().item(), prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        windows = self._windows(batch)
        n_batches = int(np.ceil(len(windows) / self.valid_batch_windows))
        valid_losses, sizes = [], []
        for i in range(n_batches):
            chunk = windows[i * self.valid_batch_windows:(i + 1) * self.valid_batch_windows]
            x, y = chunk[:, : self.model.input_size], chunk[:, self.model.input_size:]
            valid_losses.append(self.loss_fn(self.model(x), y))
            sizes.append(len(chunk))

        valid_loss = torch.stack(valid_losses)
        sizes = torch.tensor(sizes, device=valid_loss.device, dtype=valid_loss.dtype)
        valid_loss = (valid_loss * sizes).sum() / sizes.sum()
        if torch.isnan(valid_loss):
            raise RuntimeError("validation loss is NaN")

        self.log("valid_loss", valid_loss.item(), batch_size=int(sizes.sum()), prog_bar=True)
        self.validation_step_outputs.append(valid_loss)
        return valid_loss

    def on_validation_epoch_end(self):
        avg_loss = torch.stack(self.validation_step_outputs).mean()
        self.log("ptl/val_loss", avg_loss)
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
