# Source: https://github.com/GiovanaSantiagoLima/welding-optuna-pytorch/blob/2f9d70b8b047ac7712e3feecd05fd23cabff7036/src/ml_model/train.py
# Report: audit of the welding-parameter Optuna/K-fold trainer: every validation epoch of every fold of every trial appends the model's predictions and the moved targets to lists while they stay on the GPU, then concatenates them there for the metrics
# Shape: same per-fold trainer and Optuna objective, but the validation loop keeps predictions as .cpu() copies and the targets as the CPU tensors the loader gave, so only one batch lives on the GPU at a time
# Expect: near-miss: must be silent
import copy

import numpy as np
import optuna
import torch
import torch.nn as nn

OUTPUTS = ["voltage", "current", "speed"]
OPTIMIZERS = {"Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW, "SGD": torch.optim.SGD, "RMSprop": torch.optim.RMSprop}
LOSSES = {"MSELoss": nn.MSELoss, "L1Loss": nn.L1Loss, "HuberLoss": nn.HuberLoss}


def compute_metrics(preds, targets):
    out = {}
    for i, name in enumerate(OUTPUTS):
        p, t = preds[:, i], targets[:, i]
        ss_res = ((t - p) ** 2).sum().item()
        ss_tot = ((t - t.mean()) ** 2).sum().item()
        out[f"mse_{name}"] = nn.functional.mse_loss(p, t).item()
        out[f"r2_{name}"] = 1.0 - ss_res / ss_tot if ss_tot > 0 else 0.0
    out["mse"] = float(np.mean([out[f"mse_{n}"] for n in OUTPUTS]))
    out["r2"] = float(np.mean([out[f"r2_{n}"] for n in OUTPUTS]))
    return out


def train_cv(params, folds, build_model, epochs=100, patience=15, device="cuda"):
    dev = torch.device(device)
    weights = torch.tensor([1.0, 1.0, 2.0], device=dev)
    fold_metrics, best_overall, best_state = [], float("inf"), None
    for fold, (train_loader, val_loader) in enumerate(folds):
        model = build_model(params).to(dev)
        optimizer = OPTIMIZERS[params["optimizer"]](model.parameters(), lr=params["learning_rate"], weight_decay=params["weight_decay"])
        criterion = LOSSES[params["criterion"]](reduction="none")
        best_fold, best_mse, bad_epochs = None, float("inf"), 0
        for epoch in range(epochs):
            model.train()
            for (x_num, x_base, x_add), y in train_loader:
                x_num, x_base, x_add, y = x_num.to(dev), x_base.to(dev), x_add.to(dev), y.to(dev)
                optimizer.zero_grad()
                per_output = criterion(model(x_num, x_base, x_add), y).mean(dim=0)
                loss = (per_output * weights).sum()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                optimizer.step()

            model.eval()
            all_preds, all_targets = [], []
            with torch.no_grad():
                for (x_num, x_base, x_add), y in val_loader:
                    pred = model(x_num.to(dev), x_base.to(dev), x_add.to(dev))
                    all_preds.append(pred.cpu())
                    all_targets.append(y)
            metrics = compute_metrics(torch.cat(all_preds), torch.cat(all_targets))
            if metrics["mse"] < best_mse:
                best_mse, best_fold, bad_epochs = metrics["mse"], metrics, 0
                if best_mse < best_overall:
                    best_overall, best_state = best_mse, copy.deepcopy(model.state_dict())
            else:
                bad_epochs += 1
                if bad_epochs >= patience:
                    print(f"fold {fold + 1}: early stop at epoch {epoch + 1}, best mse {best_mse:.4f}")
                    break
        fold_metrics.append(best_fold)
    mean = {k: float(np.mean([m[k] for m in fold_metrics])) for k in fold_metrics[0]}
    return mean, best_state


def make_objective(folds, build_model):
    def objective(trial):
        params = {
            "hidden_size": trial.suggest_categorical("hidden_size", [128, 256]),
            "learning_rate": trial.suggest_float("learning_rate", 1e-4, 1e-2, log=True),
            "weight_decay": trial.suggest_float("weight_decay", 1e-4, 1e-3, log=True),
            "optimizer": trial.suggest_categorical("optimizer", list(OPTIMIZERS)),
            "criterion": trial.suggest_categorical("criterion", list(LOSSES)),
        }
        mean, _ = train_cv(params, folds, build_model, epochs=100, patience=15)
        return mean["mse"], mean["r2"]
    return objective


def run_study(folds, build_model, n_trials=50):
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=optuna.samplers.TPESampler(seed=42))
    study.optimize(make_objective(folds, build_model), n_trials=n_trials, gc_after_trial=True)
    return study.best_trials
