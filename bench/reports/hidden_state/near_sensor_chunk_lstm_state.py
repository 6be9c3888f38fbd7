# Source: https://pexcera.com/learn/sequence-modeling/backpropagation-through-time-bptt.html
# Report: truncated BPTT over long sequences: running each chunk and passing the final hidden state on without detaching it keeps every earlier chunk's activations in the graph, which runs out of memory on long sequences; the fix detaches the state (tuple-aware) between chunks
# Shape: same chunked sensor forecaster, but the LSTM (h, c) tuple is detached right after each chunk's forward, so every backward stops at the chunk boundary and needs no retained graph
# Expect: near-miss: must be silent
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TBPTTConfig:
    chunk_len: int = 64
    lr: float = 1e-3
    clip: float = 1.0
    epochs: int = 20
    device: str = "cuda"


class SensorForecaster(nn.Module):
    def __init__(self, n_channels, hidden=128, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(n_channels, hidden, layers, batch_first=True)
        self.proj = nn.Linear(hidden, n_channels)

    def forward(self, x, state=None):
        out, state = self.lstm(x, state)
        return self.proj(out), state


def split_chunks(series, chunk_len):
    # series: (batch, time, channels); targets are the next time step
    inputs, targets = series[:, :-1], series[:, 1:]
    for start in range(0, inputs.size(1), chunk_len):
        yield inputs[:, start:start + chunk_len], targets[:, start:start + chunk_len]


def train_on_recording(model, optimizer, series, cfg):
    state = None
    stats = {"loss": 0.0, "chunks": 0}
    for x_chunk, y_chunk in split_chunks(series, cfg.chunk_len):
        x_chunk, y_chunk = x_chunk.to(cfg.device), y_chunk.to(cfg.device)
        pred, state = model(x_chunk, state)
        state = tuple(s.detach() for s in state)
        loss = F.mse_loss(pred, y_chunk)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        optimizer.step()
        stats["loss"] += loss.item()
        stats["chunks"] += 1
    return stats


def fit(model, recordings, cfg=TBPTTConfig()):
    model.to(cfg.device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    curve = []
    for epoch in range(cfg.epochs):
        epoch_loss, epoch_chunks = 0.0, 0
        for series in recordings:
            stats = train_on_recording(model, optimizer, series, cfg)
            epoch_loss += stats["loss"]
            epoch_chunks += stats["chunks"]
        curve.append(epoch_loss / max(epoch_chunks, 1))
        print(f"epoch {epoch}: mse {curve[-1]:.5f}")
    return curve
