# Source: https://thecodeforge.io/ml-ai/pytorch-basics/
# Report: production incident: optimizer.zero_grad() was missing from a 200-epoch training loop, so every step applied the sum of all previous gradients and the weights were silently corrupted
# Shape: a small tabular trainer class whose fit() loop steps the optimizer and scheduler but never resets .grad
# Expect: TML002 line 36
import torch
import torch.nn as nn


class ChurnModel(nn.Module):
    def __init__(self, n_features, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_features, hidden), nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


class Trainer:
    def __init__(self, model, lr=1e-3, epochs=200, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.epochs = epochs
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)
        self.history = []

    def fit(self, X, y):
        X, y = X.to(self.device), y.float().to(self.device)
        self.model.train()
        # full-batch training: one step per epoch
        for epoch in range(self.epochs):  # expect: TML002
            logits = self.model(X)
            loss = self.criterion(logits, y)
            loss.backward()
            self.optimizer.step()
            self.scheduler.step()
            self.history.append(loss.item())
            if epoch % 20 == 0:
                print(f"epoch {epoch:3d}  loss {loss.item():.4f}")
        return self.history
