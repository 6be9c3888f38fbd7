# Modelled on: https://github.com/tenstorrent/tt-blacksmith/pull/711
# Report: the trainer forgot to zero gradients after each optimizer step, so LoRA updates used summed gradients.
import torch
from torch.cuda.amp import GradScaler, autocast


class LoraTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = GradScaler()

    def fit(self, loader, epochs=1):
        for _ in range(epochs):
            for batch in loader:
                with autocast():
                    out = self.model(**batch)
                self.scaler.scale(out.loss).backward()
                self.scaler.step(self.optimizer)  # expect: TML002
                self.scaler.update()
