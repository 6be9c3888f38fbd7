# Source: https://github.com/online-ml/deep-river/commit/ebfda85eb915db669bdb185da863d8670985ef54
# Report: river-torch's RollingAutoencoder scored streamed samples with module.eval() but no grad-disabled context; PR #77 "Predict in inference mode" wrapped the forward passes in torch.inference_mode() (source note: PR https://github.com/online-ml/deep-river/pull/77)
# Shape: no longer keeps the value: the same scorer with both forward passes under torch.inference_mode(), plus the rolling deque(maxlen) window and .item()/.tolist() scores
# Expect: near-miss: must be silent
from collections import deque
from typing import Any, List

import numpy as np
import pandas as pd
import torch
from torch import nn


def deque2rolling_tensor(window, device="cpu"):
    return torch.tensor(list(window), dtype=torch.float32, device=device)


class LSTMAutoencoder(nn.Module):
    def __init__(self, n_features, hidden_size=10, n_layers=1):
        super().__init__()
        self.encoder = nn.LSTM(n_features, hidden_size, n_layers)
        self.decoder = nn.LSTM(hidden_size, n_features, n_layers)

    def forward(self, x):
        _, (h, _) = self.encoder(x)
        h = h[-1].unsqueeze(0).expand(x.shape[0], -1, -1)
        x_hat, _ = self.decoder(h)
        return x_hat


class RollingAutoencoder:
    def __init__(self, n_features, lr=1e-3, device="cuda", window_size=10, append_predict=False):
        self.device = device
        self.window_size = window_size
        self.append_predict = append_predict
        self.module = LSTMAutoencoder(n_features).to(device)
        self.loss_fn = nn.functional.mse_loss
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=lr)
        self._x_window = deque(maxlen=window_size)

    def _learn(self, x: torch.Tensor):
        self.module.train()
        x_pred = self.module(x)
        loss = self.loss_fn(x_pred, x)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def learn_one(self, x: dict, y: Any = None) -> "RollingAutoencoder":
        self._x_window.append(list(x.values()))
        if len(self._x_window) == self.window_size:
            x_t = deque2rolling_tensor(self._x_window, device=self.device)
            self._learn(x=x_t)
        return self

    def score_one(self, x: dict) -> float:
        res = 0.0
        if len(self._x_window) == self.window_size:
            x_win = self._x_window.copy()
            x_win.append(list(x.values()))
            x_t = deque2rolling_tensor(x_win, device=self.device)
            self.module.eval()
            with torch.inference_mode():
                x_pred = self.module(x_t)
            loss = self.loss_fn(x_pred, x_t)
            res = loss.item()
        if self.append_predict:
            self._x_window.append(list(x.values()))
        return res

    def score_many(self, X: pd.DataFrame) -> List[Any]:
        x_win = self._x_window.copy()
        x_win.append(X.values.tolist())
        if self.append_predict:
            self._x_window.append(X.values.tolist())
        if len(self._x_window) == self.window_size:
            self.module.eval()
            X_t = deque2rolling_tensor(x_win, device=self.device)
            with torch.inference_mode():
                x_pred = self.module(X_t)
            loss = torch.mean((x_pred - X_t) ** 2, dim=list(range(1, x_pred.dim())))
            losses = loss.detach().cpu().numpy()
            if len(losses) < len(X):
                losses = np.pad(losses, (len(X) - len(losses), 0))
            return losses.tolist()
        return np.zeros(len(X)).tolist()


def run_stream(stream, n_features):
    detector = RollingAutoencoder(n_features=n_features)
    scores = []
    for x, _ in stream:
        scores.append(detector.score_one(x))
        detector.learn_one(x)
    return scores
