# Source: https://github.com/huggingface/transformers/issues/13019
# Report: repeatedly running large models in hyperparameter_search ran the GPU out of memory; the trainer kept the previous trial's model on the device while the next trial loaded a new one (workaround: del trainer.model, gc.collect, empty_cache).
# Shape: a hand-written search loop builds a model and a trainer-like object per configuration and keeps every trainer (and so every model on the GPU) in a list.
# Expect: TML004 line 36
import itertools

import torch
import torch.nn as nn


class SimpleTrainer:
    def __init__(self, model, lr, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)

    def train(self, loader):
        for input_ids, labels in loader:
            logits = self.model(input_ids.to(self.device))
            loss = nn.functional.cross_entropy(logits, labels.to(self.device))
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def evaluate(self, loader):
        hits = sum((self.model(x.to(self.device)).argmax(-1) == y.to(self.device)).sum().item() for x, y in loader)
        return hits / len(loader.dataset)


def grid_search(make_model, train_loader, val_loader):
    trainers = []
    for lr, dropout in itertools.product([1e-5, 3e-5, 1e-4], [0.0, 0.1]):
        trainer = SimpleTrainer(make_model(dropout), lr)
        trainer.train(train_loader)
        trainers.append((trainer.evaluate(val_loader), trainer))  # expect: TML004
    return max(trainers, key=lambda pair: pair[0])
