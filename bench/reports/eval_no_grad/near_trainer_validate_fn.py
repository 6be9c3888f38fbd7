# Source: https://github.com/L-ED/nn_learning/blob/55ec411252636c86423e089b3f644fb2d9cdf6ad/learning/validate.py
# Report: audit: validate_(trainer) is a free function the Trainer calls every val_epoch; it switches trainer.model to eval and runs the whole val loader inside torch.no_grad(), recording loss.item() and a float metric into the trainer's history callables
# Shape: as the repository: Trainer object with prepare_batch / calculate_metric / optimizer_step helpers, train and validate functions passed in and called as fn(trainer), the val forward under no_grad
# Expect: near-miss: must be silent
import logging

import torch


class MetricHistory:
    def __init__(self):
        self.batch_values, self.epochs = [], []

    def __call__(self, value):
        self.batch_values.append(value)

    def finalize_epoch(self):
        self.epochs.append(sum(self.batch_values) / max(len(self.batch_values), 1))
        self.batch_values = []
        return self.epochs[-1]


class Trainer:
    def __init__(self, model, loss_fn, optimizer, trainloader, valloader,
                 train_fn, val_fn, device="cuda", epochs=10, val_epoch=1):
        self.model = model.to(device)
        self.device = device
        self.loss_fn, self.optimizer = loss_fn, optimizer
        self.trainloader, self.valloader = trainloader, valloader
        self.train_fn, self.val_fn = train_fn, val_fn
        self.epochs, self.val_epoch = epochs, val_epoch
        self.train_metrics = {"acc": MetricHistory(), "loss": MetricHistory()}
        self.val_metrics = {"acc": MetricHistory(), "loss": MetricHistory()}
        self.log = logging.getLogger("trainer").info

    def learn(self):
        for epoch in range(self.epochs):
            self.cur_epoch = epoch
            self.train_fn(self)
            if epoch % self.val_epoch == 0 or epoch + 1 == self.epochs:
                self.val_fn(self)

    def prepare_batch(self, batch):
        imgs, target = batch
        return imgs.to(self.device), target.to(self.device).long()

    def calculate_metric(self, pred, target):
        return (pred.argmax(dim=1) == target).float().mean().item()

    def optimizer_step(self, loss):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()

    def finalize_epoch(self, mode):
        metrics = self.train_metrics if mode == "train" else self.val_metrics
        acc, loss = metrics["acc"].finalize_epoch(), metrics["loss"].finalize_epoch()
        self.log(f"EPOCH {self.cur_epoch}: {mode}_loss {loss:.4f} acc {acc:.4f}")


def train_(trainer):
    trainer.model.train()
    for batch in trainer.trainloader:
        imgs, target = trainer.prepare_batch(batch)
        pred = trainer.model(imgs)
        loss = trainer.loss_fn(pred, target)
        trainer.optimizer_step(loss)
        trainer.train_metrics["acc"](trainer.calculate_metric(pred, target))
        trainer.train_metrics["loss"](loss.item())
    trainer.finalize_epoch("train")


def validate_(trainer):
    trainer.model.eval()
    with torch.no_grad():
        for batch in trainer.valloader:
            imgs, target = trainer.prepare_batch(batch)
            pred = trainer.model(imgs)
            loss = trainer.loss_fn(pred, target)
            trainer.val_metrics["acc"](trainer.calculate_metric(pred, target))
            trainer.val_metrics["loss"](loss.item())
    trainer.finalize_epoch("validate")
