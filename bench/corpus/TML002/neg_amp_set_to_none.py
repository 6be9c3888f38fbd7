# Modelled on: https://github.com/tenstorrent/tt-blacksmith/pull/711
# Report: the fixed AMP trainer zeroes gradients (set_to_none) at the start of every step.
from torch.cuda.amp import GradScaler, autocast


class LoraTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = GradScaler()

    def fit(self, loader, epochs=1):
        for _ in range(epochs):
            for batch in loader:
                self.optimizer.zero_grad(set_to_none=True)
                with autocast():
                    out = self.model(**batch)
                self.scaler.scale(out.loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
