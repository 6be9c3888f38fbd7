# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/5733
# Report: video-prediction LightningModule used the class-based `pl.metrics.SSIM()` object in its SSIM loss helper; GPU memory kept increasing across epochs (not with MSE); nerfstudio PR #81 cites this issue and fixed the same leak by switching to functional SSIM
# Shape: a stateful metric object held on self is called per frame from a loss helper that training_step uses, so every attached prediction slice is kept in the metric's state
# Expect: TML001 line 25
import pytorch_lightning as pl
import torch
from torch import nn


class video_pred(pl.LightningModule):
    def __init__(self, model, lr=1e-4, n_steps_past=5, n_steps_ahead=5):
        super().__init__()
        self.model = model
        self.lr = lr
        self.n_steps_past = n_steps_past
        self.n_steps_ahead = n_steps_ahead
        self.accuracy = pl.metrics.SSIM()
        self.mse = nn.MSELoss()

    def forward(self, x):
        return self.model(x, future_seq=self.n_steps_ahead)

    def SSIM_loss(self, y_hat, y):
        loss_4_each_frame = [
            1.0 - self.accuracy(y_hat[:, i], y[:, i])  # expect: TML001
            for i in range(self.n_steps_ahead)
        ]
        return torch.stack(loss_4_each_frame).mean()

    def training_step(self, batch, batch_idx):
        x = batch[:, : self.n_steps_past]
        y = batch[:, self.n_steps_past :]
        y_hat = self.forward(x)
        loss = self.SSIM_loss(y_hat, y) + self.mse(y_hat, y)
        self.log("train_loss", loss.detach(), prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x = batch[:, : self.n_steps_past]
        y = batch[:, self.n_steps_past :]
        y_hat = self.forward(x)
        val_loss = self.mse(y_hat, y)
        self.log("val_loss", val_loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr, betas=(0.9, 0.98))
