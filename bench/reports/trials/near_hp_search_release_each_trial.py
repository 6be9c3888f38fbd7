# Source: https://github.com/huggingface/transformers/issues/13019
# Report: the workaround in the thread frees the previous trial's model before the next one (del trainer.model, gc.collect(), torch.cuda.empty_cache()).
# Shape: same search loop; only (score, config) pairs are kept, and the trainer of each configuration is released before the next one is built.
# Expect: near-miss: must be silent
import gc
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
    results = []
    for lr, dropout in itertools.product([1e-5, 3e-5, 1e-4], [0.0, 0.1]):
        trainer = SimpleTrainer(make_model(dropout), lr)
        trainer.train(train_loader)
        results.append((trainer.evaluate(val_loader), {"lr": lr, "dropout": dropout}))
        del trainer
        gc.collect()
    return max(results, key=lambda pair: pair[0])
