# Source: https://github.com/TakuyaShintate/tsts/blob/e638cbcc081d1fa3b1a8047470f9bfe864ff0add/tsts/trainers/trainer.py
# Report: audit of the forecasting toolkit's SupervisedTrainer.on_val: forecasts are computed under torch.no_grad(), pass through scaler.inv_transform, and are handed to every Metric.update, whose body reduces them with .item() before adding to self.total_score (correct code; an earlier on_val ran the forward without no_grad)
# Shape: validation forecasts travel through a scaler helper into metric objects kept on the trainer; each metric stores only Python floats
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class MSEMetric:
    def __init__(self):
        self.total_score = 0.0
        self.total_instances = 0.0

    def update(self, Z, y, y_mask):
        err = F.mse_loss(Z, y, reduction="none") * y_mask
        self.total_score += err.sum().item()
        self.total_instances += y_mask.sum().item()

    def __call__(self):
        score = float(self.total_score) / max(self.total_instances, 1.0)
        self.total_score, self.total_instances = 0.0, 0.0
        return score


class StandardScaler:
    def __init__(self, mean, std):
        self.mean, self.std = mean, std

    def inv_transform(self, x):
        return x * self.std + self.mean


class ForecastTrainer:
    def __init__(self, model, scaler, metrics, train_loader, valid_loader, device="cuda"):
        self.model = model.to(device)
        self.scaler = scaler
        self.metrics = metrics
        self.train_loader = train_loader
        self.valid_loader = valid_loader
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def on_train(self):
        self.model.train()
        total = 0.0
        for X, y, X_mask, y_mask in self.train_loader:
            X, y, y_mask = X.to(self.device), y.to(self.device), y_mask.to(self.device)
            Z = self.model(X, X_mask.to(self.device))
            loss = (F.mse_loss(Z, y, reduction="none") * y_mask).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item()
        return total / len(self.train_loader)

    def on_val(self):
        self.model.eval()
        for X, y, X_mask, y_mask in self.valid_loader:
            X, y = X.to(self.device), y.to(self.device)
            X_mask, y_mask = X_mask.to(self.device), y_mask.to(self.device)
            with torch.no_grad():
                Z = self.model(X, X_mask)
            Z = self.scaler.inv_transform(Z)
            y = self.scaler.inv_transform(y)
            for metric in self.metrics:
                metric.update(Z, y, y_mask)
        return [metric() for metric in self.metrics]

    def fit(self, epochs):
        for epoch in range(epochs):
            train_loss = self.on_train()
            scores = self.on_val()
            print(f"epoch {epoch}: train {train_loss:.4f} val {scores}")
