# Source: https://github.com/dvgodoy/PyTorchStepByStep/blob/08ca6bf7d6591c9348d8f6c88735b89879caa26f/stepbystep/v4.py
# Report: audit of the book's StepByStep trainer: the per-batch losses travel out of closures built by _make_train_step/_make_val_step and are appended to a list, but each closure already returns loss.item(), and the val closure (model.eval() + forward) is only ever called from train() inside `with torch.no_grad()`; correct as written
# Shape: closures stored on self return Python floats; _mini_batch picks the closure and loader by a flag, appends the floats and np.mean()s them; epoch means go to self.losses and a SummaryWriter
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter


class StepByStep:
    def __init__(self, model, loss_fn, optimizer, device="cuda"):
        self.model = model.to(device)
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.device = device
        self.train_loader = self.val_loader = None
        self.writer = None
        self.losses, self.val_losses = [], []
        self.total_epochs = 0
        self.train_step = self._make_train_step()
        self.val_step = self._make_val_step()

    def set_loaders(self, train_loader, val_loader=None):
        self.train_loader, self.val_loader = train_loader, val_loader

    def set_tensorboard(self, name, folder="runs"):
        self.writer = SummaryWriter(f"{folder}/{name}")

    def _make_train_step(self):
        def perform_train_step(x, y):
            self.model.train()
            yhat = self.model(x)
            loss = self.loss_fn(yhat, y)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return loss.item()
        return perform_train_step

    def _make_val_step(self):
        def perform_val_step(x, y):
            self.model.eval()
            yhat = self.model(x)
            loss = self.loss_fn(yhat, y)
            return loss.item()
        return perform_val_step

    def _mini_batch(self, validation=False):
        loader = self.val_loader if validation else self.train_loader
        step = self.val_step if validation else self.train_step
        if loader is None:
            return None
        mini_batch_losses = []
        for x_batch, y_batch in loader:
            x_batch, y_batch = x_batch.to(self.device), y_batch.to(self.device)
            mini_batch_loss = step(x_batch, y_batch)
            mini_batch_losses.append(mini_batch_loss)
        return np.mean(mini_batch_losses)

    def train(self, n_epochs, seed=42):
        torch.manual_seed(seed)
        for epoch in range(n_epochs):
            self.total_epochs += 1
            loss = self._mini_batch(validation=False)
            self.losses.append(loss)
            with torch.no_grad():
                val_loss = self._mini_batch(validation=True)
                self.val_losses.append(val_loss)
            if self.writer:
                scalars = {"training": loss}
                if val_loss is not None:
                    scalars["validation"] = val_loss
                self.writer.add_scalars("loss", scalars, global_step=epoch)
        if self.writer:
            self.writer.close()

    def save_checkpoint(self, filename):
        torch.save({"epoch": self.total_epochs, "model_state_dict": self.model.state_dict(),
                    "optimizer_state_dict": self.optimizer.state_dict(),
                    "loss": self.losses, "val_loss": self.val_losses}, filename)
