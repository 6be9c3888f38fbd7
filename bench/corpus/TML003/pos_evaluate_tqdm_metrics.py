# Modelled on: https://github.com/facebookresearch/fairchem/pull/199
# Report: validation memory (up to 8 GB allocated) was higher than training; wrapping evaluation fixed it (about 1.7 GB).
from collections import defaultdict

import torch
from tqdm import tqdm


class ForcesTrainer:
    def __init__(self, model, loss_fn, device="cuda"):
        self.model = model
        self.loss_fn = loss_fn
        self.device = device

    def evaluate(self, loader):
        self.model.eval()
        metrics = defaultdict(float)
        for batch in tqdm(loader, desc="val"):
            batch = batch.to(self.device)
            energy, forces = self.model(batch)  # expect: TML003
            metrics["energy_mae"] += (energy - batch.y).abs().mean().item()
            metrics["forces_mae"] += (forces - batch.force).abs().mean().item()
        return {k: v / len(loader) for k, v in metrics.items()}
