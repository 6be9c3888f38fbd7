# Source: https://github.com/psaegert/bcnf/blob/00c375a5d8f4a27321f72559effd796e6284e9f6/src/bcnf/train/trainer.py
# Report: Trainer class for a conditional normalizing flow; the per-batch validation helper runs the model with no grad context of its own, and the epoch loop calls it inside "with torch.no_grad()".
# Shape: _validate_batch is only ever called from the val loop under torch.no_grad() (grad disabled by the caller); it returns loss.item() and two small stats, and _train_batch returns loss.item(), so nothing graph-attached is kept.
# Expect: near-miss: must be silent
import datetime
from typing import Callable

import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class HistoryHandler:
    def __init__(self, window: int, patience: int):
        self.window = window
        self.patience = patience
        self.val_losses: list = []
        self.val_loss_rolling_avg = float("inf")
        self.best_val_loss = float("inf")
        self.best_val_epoch = 0
        self.history: dict = {}

    def update_rolling_validation_loss(self, val_loss: float, epoch: int) -> None:
        self.val_losses.append(val_loss)
        self.val_loss_rolling_avg = float(np.mean(self.val_losses[-self.window:]))
        if self.val_loss_rolling_avg < self.best_val_loss:
            self.best_val_loss = self.val_loss_rolling_avg
            self.best_val_epoch = epoch

    def record(self, name: str, epoch: int, value) -> None:
        self.history.setdefault(name, []).append((epoch, value))


class FlowTrainer:
    def __init__(self, config: dict, loss_function: Callable):
        self.config = config
        self.loss_function = loss_function
        self.history = HistoryHandler(config["val_loss_window_size"], config["val_loss_patience"])

    def fit(self, model, train_loader: DataLoader, val_loader: DataLoader, optimizer, scheduler=None):
        pbar = tqdm(range(self.config["n_epochs"]))
        for epoch in pbar:
            model.train()
            train_loss = 0.0
            for i, (x, y) in enumerate(train_loader):
                loss = self._train_batch(x, y, model, optimizer)
                if loss > 1e5 or np.isnan(loss):
                    raise RuntimeError(f"loss exploded to {loss} at epoch {epoch + i / len(train_loader)}")
                train_loss += loss
            train_loss /= len(train_loader)

            model.eval()
            with torch.no_grad():
                val_loss = 0.0
                for x, y in val_loader:
                    loss, z_mean, z_std = self._validate_batch(x, y, model)
                    val_loss += loss
                val_loss /= len(val_loader)

            self.history.update_rolling_validation_loss(val_loss, epoch)
            self.history.record("train_loss", epoch, train_loss)
            self.history.record("val_loss", epoch, val_loss)
            self.history.record("time", epoch, datetime.datetime.now().timestamp())
            pbar.set_description(
                f"train {train_loss:.4f} val {val_loss:.4f} (avg {self.history.val_loss_rolling_avg:.4f}) "
                f"z ({z_mean.mean().item():.3f} +- {z_std.mean().item():.3f})"
            )
            if scheduler is not None:
                scheduler.step(self.history.val_loss_rolling_avg)
            if epoch - self.history.best_val_epoch >= self.history.patience:
                break
        return model

    def _train_batch(self, x, y, model, optimizer) -> float:
        x = x.to(model.device)
        y = y.to(model.device)
        optimizer.zero_grad()
        z = model.forward(y, x, log_det_J=True)
        loss = self.loss_function(z, model.log_det_J)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        return loss.item()

    def _validate_batch(self, x, y, model):
        x = x.to(model.device)
        y = y.to(model.device)
        z = model.forward(y, x, log_det_J=True)
        loss = self.loss_function(z, model.log_det_J)
        return loss.item(), z.mean(dim=0), z.std(dim=0)
