# Source: https://github.com/huggingface/transformers/issues/13019
# Report: repeatedly running models in hyperparameter_search ran the GPU out of memory; the previous trial's model stayed on the device while the next trial loaded a new one.
# Shape: a hand-written search loop builds a model and a trainer-like object per configuration and keeps every trainer (so every model on the device) in a list.
# Expect: TML004 line 31
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class MiniTrainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def train(self, steps=2):
        for step in range(steps):
            loss = self.model(torch.randn(16, 32, device=device)).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()


trainers = []
for trial in range(24):
    model = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 8)).to(device)
    trainer = MiniTrainer(model, lr=10 ** -(2 + trial % 3))
    trainer.train()
    trainers.append(trainer)  # expect: TML004
print(len(trainers))
