# Source: https://github.com/ML4ITS/mtad-gat-pytorch/blob/00dea4ec5fb3ea34265d54fe7187d54a55f197bb/training.py
# Report: Trainer.fit as in the repository: the per-batch forecast/recon RMSE values are appended with .item()
# Shape: the epoch lists bound before the batch loop receive Python floats (.item()), reduced with numpy into the self.losses dict
# Expect: near-miss: must be silent

import os
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


class Trainer:
    """Trainer class for the MTAD-GAT forecasting + reconstruction anomaly detector."""

    def __init__(self, model, optimizer, window_size, n_features, target_dims=None, n_epochs=200,
                 batch_size=256, forecast_criterion=nn.MSELoss(), recon_criterion=nn.MSELoss(),
                 use_cuda=True, dload="", log_dir="output/", print_every=1, log_tensorboard=True):
        self.model = model
        self.optimizer = optimizer
        self.window_size = window_size
        self.n_features = n_features
        self.target_dims = target_dims
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.forecast_criterion = forecast_criterion
        self.recon_criterion = recon_criterion
        self.device = "cuda" if use_cuda and torch.cuda.is_available() else "cpu"
        self.dload = dload
        self.print_every = print_every
        self.log_tensorboard = log_tensorboard
        self.losses = {"train_total": [], "train_forecast": [], "train_recon": []}
        self.epoch_times = []
        if self.device == "cuda":
            self.model.cuda()
        if self.log_tensorboard:
            self.writer = SummaryWriter(f"{log_dir}")

    def _align(self, x, y, preds):
        if self.target_dims is not None:
            x = x[:, :, self.target_dims]
            y = y[:, :, self.target_dims].squeeze(-1)
        if preds.ndim == 3:
            preds = preds.squeeze(1)
        if y.ndim == 3:
            y = y.squeeze(1)
        return x, y, preds

    def fit(self, train_loader):
        print(f"Training model for {self.n_epochs} epochs..")
        train_start = time.time()
        for epoch in range(self.n_epochs):
            epoch_start = time.time()
            self.model.train()
            forecast_b_losses = []
            recon_b_losses = []

            for x, y in train_loader:
                x = x.to(self.device)
                y = y.to(self.device)
                self.optimizer.zero_grad()
                preds, recons = self.model(x)
                x, y, preds = self._align(x, y, preds)

                forecast_loss = torch.sqrt(self.forecast_criterion(y, preds))
                recon_loss = torch.sqrt(self.recon_criterion(x, recons))
                loss = forecast_loss + recon_loss
                loss.backward()
                self.optimizer.step()
                forecast_b_losses.append(forecast_loss.item())
                recon_b_losses.append(recon_loss.item())

            forecast_epoch_loss = np.sqrt((np.array(forecast_b_losses) ** 2).mean())
            recon_epoch_loss = np.sqrt((np.array(recon_b_losses) ** 2).mean())
            total_epoch_loss = forecast_epoch_loss + recon_epoch_loss

            self.losses["train_forecast"].append(forecast_epoch_loss)
            self.losses["train_recon"].append(recon_epoch_loss)
            self.losses["train_total"].append(total_epoch_loss)
            if self.log_tensorboard:
                self.write_loss(epoch)

            epoch_time = time.time() - epoch_start
            self.epoch_times.append(epoch_time)
            if epoch % self.print_every == 0:
                print(f"[Epoch {epoch + 1}] forecast_loss = {forecast_epoch_loss:.5f}, "
                      f"recon_loss = {recon_epoch_loss:.5f}, total_loss = {total_epoch_loss:.5f} [{epoch_time:.1f}s]")

        self.save("model.pt")
        print(f"-- Training done in {int(time.time() - train_start)}s.")

    def save(self, file_name):
        if not os.path.exists(self.dload):
            os.mkdir(self.dload)
        torch.save(self.model.state_dict(), self.dload + "/" + file_name)

    def write_loss(self, epoch):
        for key, value in self.losses.items():
            if len(value) != 0:
                self.writer.add_scalar(key, value[-1], epoch)
