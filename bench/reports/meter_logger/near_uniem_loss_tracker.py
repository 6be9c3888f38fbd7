# Source: https://github.com/wangyuxinwhy/uniem/blob/0015ec02204b179202253d3a06a11177d7919c09/uniem/trainer.py
# Report: accelerate-based Trainer class for embedding fine-tuning that hands the raw loss tensor to a LossTracker meter every step; the tracker reduces it with .item() inside update().
# Shape: self.train_loss_tracker.update(loss) gets the graph-attached loss, but LossTracker.update turns it into a Python float first (loss_tensor.item()), so the running mean kept on the tracker holds no graph; evaluate() feeds it under torch.inference_mode().
# Expect: near-miss: must be silent
from __future__ import annotations

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from tqdm.auto import tqdm


class LossTracker:
    def __init__(self, ndigits=4) -> None:
        self.ndigits = ndigits
        self._loss: float = 0.0
        self.loss_count: int = 0
        self.history: list[float] = []

    def update(self, loss_tensor: torch.Tensor):
        loss = loss_tensor.item()
        self._loss = (self._loss * self.loss_count + loss) / (self.loss_count + 1)
        self.loss_count += 1

    def reset(self):
        self._loss = 0
        self.loss_count = 0

    def on_epoch_end(self, reset: bool = True):
        self.history.append(self.loss)
        if reset:
            self.reset()

    @property
    def loss(self) -> float:
        return round(float(self._loss), self.ndigits)


class Trainer:
    def __init__(self, *, model, train_dataloader: DataLoader, optimizer, accelerator: Accelerator,
                 validation_dataloader: DataLoader | None = None, epochs: int = 3, lr_scheduler=None,
                 log_interval: int = 50):
        self.model = model
        self.optimizer = optimizer
        self.train_dataloader = train_dataloader
        self.validation_dataloader = validation_dataloader
        self.lr_scheduler = lr_scheduler
        self.accelerator = accelerator
        self.epochs = epochs
        self.log_interval = log_interval
        self.train_loss_tracker = LossTracker()
        self.validation_loss_tracker = LossTracker()
        self.current_step = 0

    def train(self):
        for epoch in range(1, self.epochs + 1):
            self.model.train()
            bar = tqdm(total=len(self.train_dataloader), disable=not self.accelerator.is_main_process)
            for batch_index, batch in enumerate(self.train_dataloader):
                with self.accelerator.accumulate(self.model):
                    self.optimizer.zero_grad()
                    batch_output = self.model(**batch)
                    loss = batch_output["loss"]
                    self.accelerator.backward(loss)
                    self.optimizer.step()
                    if self.lr_scheduler is not None:
                        self.lr_scheduler.step()
                    self.train_loss_tracker.update(loss)
                bar.update()
                self.current_step += 1
                if batch_index % self.log_interval == 0:
                    self.accelerator.log({"loss": self.train_loss_tracker.loss}, step=self.current_step)
                    bar.set_description(f"Epoch {epoch}/{self.epochs} - loss: {self.train_loss_tracker.loss:.4f}")
            self.accelerator.log({"train/loss": self.train_loss_tracker.loss}, step=epoch)
            self.train_loss_tracker.on_epoch_end()
            bar.close()
            if self.validation_dataloader:
                val_loss = evaluate(self.model, self.validation_dataloader, self.validation_loss_tracker)
                self.accelerator.log({"validation/loss": val_loss}, step=epoch)
        self.accelerator.end_training()


def evaluate(model, dataloader: DataLoader, loss_tracker: LossTracker | None = None):
    model = model.eval()
    loss_tracker = loss_tracker or LossTracker()
    for batch in dataloader:
        with torch.inference_mode():
            batch_output = model(**batch)
            loss_tracker.update(batch_output["loss"])
    loss = loss_tracker.loss
    loss_tracker.on_epoch_end()
    return loss
