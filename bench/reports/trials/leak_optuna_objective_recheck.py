# Source: https://github.com/ellecarey/masters-project/blob/0ae8935c7417c3f7de3bc5945ce693b55bf9c58c/src/training_module/tuning_cli.py
# Report: the per-trial re-scoring block of the Optuna objective written without the torch.no_grad() block and without .item(): the returned objective value is a tensor that Optuna later casts
# Shape: after trained_model.eval() every validation batch runs with grad enabled and val_loss (bound before the loop) sums the attached losses, so the saved activations of the whole validation set stay on the GPU until the trial returns
# Expect: TML003 line 67; TML001 line 69
import optuna
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def get_model(hidden_size, input_size, output_size=1):
    return nn.Sequential(nn.Linear(input_size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, output_size))


def train_model(model, train_loader, validation_loader, criterion, optimiser, epochs, device, trial=None):
    model.to(device)
    history = {"train_loss": [], "val_loss": []}
    for epoch in range(epochs):
        model.train()
        train_loss = 0.0
        for features, labels in train_loader:
            features, labels = features.to(device), labels.to(device)
            optimiser.zero_grad()
            outputs = model(features)
            loss = criterion(outputs, labels)
            loss.backward()
            optimiser.step()
            train_loss += loss.item()
        history["train_loss"].append(train_loss / len(train_loader))

        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for features, labels in validation_loader:
                features, labels = features.to(device), labels.to(device)
                val_loss += criterion(model(features), labels).item()
        avg_val_loss = val_loss / len(validation_loader)
        history["val_loss"].append(avg_val_loss)
        if trial is not None:
            trial.report(avg_val_loss, epoch)
            if trial.should_prune():
                raise optuna.TrialPruned()
    return model, history


def run_hyperparameter_tuning(X_train, y_train, X_val, y_val, n_trials=50):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    study = optuna.create_study(direction="minimize")

    def objective(trial):
        hidden_size = trial.suggest_int("hidden_size", 16, 256, log=True)
        lr = trial.suggest_float("learning_rate", 1e-5, 1e-2, log=True)
        batch_size = trial.suggest_categorical("batch_size", [64, 128, 256])
        model = get_model(hidden_size, X_train.shape[1])
        train_loader = DataLoader(TensorDataset(X_train, y_train), batch_size=batch_size, shuffle=True)
        val_loader = DataLoader(TensorDataset(X_val, y_val), batch_size=batch_size, shuffle=False)
        criterion = nn.BCEWithLogitsLoss()
        optimiser = torch.optim.Adam(model.parameters(), lr=lr)

        trained_model, history = train_model(model, train_loader, val_loader, criterion, optimiser,
                                             epochs=30, device=device, trial=trial)

        trained_model.eval()
        val_loss = 0.0
        for features, labels in val_loader:
            features, labels = features.to(device), labels.to(device)
            outputs = trained_model(features)  # expect: TML003
            loss = criterion(outputs, labels)
            val_loss += loss  # expect: TML001
        avg_val_loss = val_loss / len(val_loader)
        return avg_val_loss

    study.optimize(objective, n_trials=n_trials)
    return study.best_params
