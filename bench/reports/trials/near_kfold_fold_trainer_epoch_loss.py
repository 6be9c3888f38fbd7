# Source: https://github.com/JiseokSeo/nested-kfold-optuna-pytorch-lightning/blob/cde0bc568a5ea81aa03cea167d02fd1c6b12b43e/src/model_modules/legacy_trainer.py
# Report: audit of the k-fold / Optuna FoldTrainer: _train_epoch sums the batch loss into total_loss, taking current_loss = loss.item() first, so each fold of each trial only accumulates Python floats (the repo's correct shape)
# Shape: same FoldTrainer/objective; `current_loss = loss.item()` then `total_loss += current_loss`: the accumulated name is assigned from .item(), not from the loss tensor
# Expect: near-miss: must be silent
import numpy as np
import optuna
import torch
import torch.nn as nn
from sklearn.model_selection import StratifiedKFold
from torch.utils.data import DataLoader, Subset


class FoldTrainer:

    def __init__(self, model, optimizer, device, epochs, fold, trial_num=None):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.criterion = nn.BCEWithLogitsLoss()
        self.device = device
        self.epochs = epochs
        self.tag = f"Trial {trial_num} | Fold {fold}"
        self.scaler = torch.cuda.amp.GradScaler()

    def _to_device(self, batch):
        image = batch["image"].to(self.device, non_blocking=True)
        csv = batch["csv"].float().to(self.device, non_blocking=True)
        return image, csv, batch["target"].float().to(self.device)

    def _train_epoch(self, loader):
        self.model.train()
        total_loss, n_valid = 0.0, 0
        for batch in loader:
            image, csv, target = self._to_device(batch)
            self.optimizer.zero_grad()
            with torch.autocast(device_type="cuda"):
                outputs = self.model(image=image, csv=csv)
                loss = self.criterion(outputs.squeeze(-1), target)
            if torch.isnan(loss) or torch.isinf(loss):
                continue
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            current_loss = loss.item()
            total_loss += current_loss
            n_valid += 1
        return total_loss / max(n_valid, 1)

    @torch.no_grad()
    def _evaluate_epoch(self, loader):
        self.model.eval()
        total_loss, n_valid = 0.0, 0
        for batch in loader:
            image, csv, target = self._to_device(batch)
            outputs = self.model(image=image, csv=csv)
            total_loss += self.criterion(outputs.squeeze(-1), target).item()
            n_valid += 1
        return total_loss / max(n_valid, 1)

    def run_fold(self, train_loader, valid_loader):
        best_val = float("inf")
        for epoch in range(self.epochs):
            train_loss = self._train_epoch(train_loader)
            val_loss = self._evaluate_epoch(valid_loader)
            print(f"{self.tag} | epoch {epoch + 1} | train {train_loss:.4f} | val {val_loss:.4f}")
            best_val = min(best_val, val_loss)
        return best_val


def make_objective(dataset, labels, build_model, n_folds=5, epochs=20, device="cuda"):
    def objective(trial):
        lr = trial.suggest_float("lr", 1e-5, 1e-2, log=True)
        batch_size = trial.suggest_categorical("batch_size", [16, 32, 64])
        folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=42)
        fold_scores = []
        for fold, (tr_idx, va_idx) in enumerate(folds.split(np.zeros(len(labels)), labels)):
            model = build_model(trial)
            optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
            trainer = FoldTrainer(model, optimizer, device, epochs, fold, trial.number)
            train_loader = DataLoader(Subset(dataset, tr_idx), batch_size=batch_size, shuffle=True)
            valid_loader = DataLoader(Subset(dataset, va_idx), batch_size=batch_size)
            fold_scores.append(trainer.run_fold(train_loader, valid_loader))
        return float(np.mean(fold_scores))

    return objective


def search(dataset, labels, build_model, n_trials=30):
    study = optuna.create_study(direction="minimize")
    study.optimize(make_objective(dataset, labels, build_model), n_trials=n_trials, gc_after_trial=True)
    return study.best_params
