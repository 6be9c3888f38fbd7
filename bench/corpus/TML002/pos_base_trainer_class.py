# Modelled on: https://github.com/yastrebksv/TennisCourtDetector/issues/7
# Report: "Why there is no optimizer.zero_grad() in base_trainer.py?" — the maintainer confirmed and fixed it.
import torch.nn as nn


class BaseTrainer:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.criterion = nn.MSELoss()

    def train_step(self, batch):
        imgs, heatmaps = batch
        out = self.model(imgs.to(self.device))
        loss = self.criterion(out, heatmaps.to(self.device))
        loss.backward()
        self.optimizer.step()  # expect: TML002
        return loss.item()

    def train(self, loader, epochs):
        for _ in range(epochs):
            for batch in loader:
                self.train_step(batch)
