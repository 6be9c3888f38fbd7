# Source: https://github.com/Vaderico/LSTM-Camera-Game/blob/5d023191b571f772b00929a92c57e7d2f9d19d31/train_manager.py
# Report: audit: the LSTM camera controller keeps its (h, c) on self across forward calls; the trainer calls model.init_hidden() but that method only returns a fresh tuple, so nothing is reset and backward(retain_graph=True) chains every sequence's graph to the previous one
# Shape: fixed: the state is passed in and returned, the trainer rebinds it to a fresh zero state at the top of every sequence, and backward() no longer retains the graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torchvision import models


class ServoPolicy(nn.Module):
    """Frozen ResNet features -> LSTM -> (vx, vy) camera velocity."""

    def __init__(self, hidden_dim=500, mid_dim=500, device="cuda"):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.device = device
        trunk = models.resnet18(weights=None)
        self.backbone = nn.Sequential(*list(trunk.children())[:-2])
        for p in self.backbone.parameters():
            p.requires_grad = False
        self.squeeze = nn.Linear(512 * 7 * 7, mid_dim)
        self.lstm = nn.LSTM(mid_dim, hidden_dim)
        self.to_velocity = nn.Linear(hidden_dim, 2)

    def init_hidden(self):
        zeros = torch.zeros(1, 1, self.hidden_dim, device=self.device)
        return (zeros, zeros.clone())

    def forward(self, frames, state):
        with torch.no_grad():
            feats = self.backbone(frames.float())
        feats = self.squeeze(feats.flatten(1)).unsqueeze(1)
        seq_out, state = self.lstm(feats, state)
        return self.to_velocity(seq_out.squeeze(1)), state


class ServoTrainer:
    def __init__(self, loaders, epochs=20, accum=10, lr=1e-4, device="cuda"):
        self.loaders = loaders
        self.epochs = epochs
        self.accum = accum
        self.device = device
        self.model = ServoPolicy(device=device).to(device)
        self.criterion = nn.MSELoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.history = []

    def run_epoch(self):
        self.model.train()
        self.optimizer.zero_grad()
        window, epoch_loss = 0.0, 0.0
        for i, (frames, velocities) in enumerate(self.loaders["train"]):
            frames = frames.squeeze(0).to(self.device)
            velocities = velocities.squeeze(0).to(self.device)
            # every recorded sequence starts from a zero state
            state = self.model.init_hidden()

            preds, state = self.model(frames, state)
            loss = self.criterion(preds, velocities) / self.accum
            window += loss.item()

            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 0.5)
            if (i + 1) % self.accum == 0:
                self.optimizer.step()
                self.optimizer.zero_grad()
                epoch_loss += window
                window = 0.0
        return epoch_loss

    def fit(self):
        for epoch in range(self.epochs):
            train_loss = self.run_epoch()
            self.history.append(train_loss)
            print(f"epoch {epoch + 1}: train {train_loss:.4f}")
        return self.history
