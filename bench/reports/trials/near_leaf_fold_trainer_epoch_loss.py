# Source: https://github.com/skj092/LeafDiseaseClassification/blob/0b55a32a083c975155bdfd338905763a7569b327/src/engine.py
# Report: audit of a per-fold leaf-disease Trainer: train_one_epoch sums loss.item() and validate_one_epoch runs under no_grad (the repo is correct); the near-miss follows it
# Shape: run_folds() builds a fresh model, optimizer, loaders and Trainer per fold; Trainer.train_one_epoch sums loss.item() into a Python float, the accuracy sum takes .item() of a device comparison, and validation is under no_grad
# Expect: near-miss: must be silent
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Subset
from sklearn.model_selection import StratifiedKFold


class Trainer:
    def __init__(self, model, train_dl, valid_dl, loss_fn, optimizer, scheduler=None,
                 device="cuda", model_dir="models", logger=None):
        self.model = model.to(device)
        self.train_dl, self.valid_dl = train_dl, valid_dl
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.device = device
        self.logger = logger
        self.model_dir = Path(model_dir)
        self.model_dir.mkdir(exist_ok=True)
        self.best_loss = float("inf")

    def train_one_epoch(self):
        self.model.train()
        train_loss, train_acc = 0, 0
        for xb, yb in self.train_dl:
            xb, yb = xb.to(self.device), yb.to(self.device)
            self.optimizer.zero_grad()
            logit = self.model(xb)
            loss = self.loss_fn(logit, yb)
            loss.backward()
            self.optimizer.step()
            if self.scheduler:
                self.scheduler.step()
            train_loss += loss.item()
            train_acc += (logit.argmax(dim=1) == yb).float().mean().item()
        return train_loss / len(self.train_dl), train_acc / len(self.train_dl)

    def validate_one_epoch(self):
        self.model.eval()
        valid_loss, valid_acc = 0, 0
        with torch.no_grad():
            for xb, yb in self.valid_dl:
                xb, yb = xb.to(self.device), yb.to(self.device)
                logit = self.model(xb)
                valid_loss += self.loss_fn(logit, yb).item()
                valid_acc += (logit.argmax(dim=1) == yb).float().mean().item()
        return valid_loss / len(self.valid_dl), valid_acc / len(self.valid_dl)

    def fit(self, num_epochs, fold=0):
        for epoch in range(num_epochs):
            train_loss, train_acc = self.train_one_epoch()
            valid_loss, valid_acc = self.validate_one_epoch()
            if self.logger:
                self.logger.info(f"fold {fold} ep {epoch}: train {train_loss:.3f} valid {valid_loss:.3f}")
            if valid_loss < self.best_loss:
                self.best_loss = valid_loss
                torch.save({"epoch": epoch, "state_dict": self.model.state_dict()},
                           self.model_dir / f"model_{fold}.pth")
        return self.best_loss


def run_folds(dataset, labels, build_model, n_folds=5, epochs=10, bs=64, device="cuda"):
    skf = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=42)
    fold_scores = {}
    for fold, (tr_idx, va_idx) in enumerate(skf.split(labels, labels)):
        train_dl = DataLoader(Subset(dataset, tr_idx), bs, shuffle=True, num_workers=4)
        valid_dl = DataLoader(Subset(dataset, va_idx), bs, num_workers=4)
        model = build_model()
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        trainer = Trainer(model, train_dl, valid_dl, nn.CrossEntropyLoss(), optimizer, device=device)
        fold_scores[fold] = trainer.fit(epochs, fold=fold)
    return fold_scores
