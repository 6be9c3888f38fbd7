# Source: https://github.com/TL-System/plato/blob/010629e6ec2d5232631d64ac44224f88481d2029/plato/trainers/basic.py
# Report: the federated client trainer hands the graph-attached batch loss to LossTracker.update, whose body sums `total_loss += value * batch_size`, so the epoch's sum carries every step's graph until the per-epoch reset
# Shape: forward/backward helper on the client trainer passes `loss` to self.loss_meter.update(); the meter's method keeps a running tensor sum on self
# Expect: TML001 line 45
import time

import torch
import torch.nn as nn


class EpochLossMeter:
    """Average of the per-batch losses seen during one local epoch."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.last = 0
        self.total = 0
        self.count = 0

    def update(self, value, n=1):
        self.last = value
        self.total += value * n
        self.count += n

    @property
    def average(self):
        return float(self.total / max(self.count, 1))


class ClientTrainer:
    def __init__(self, model, device="cuda", lr=0.01):
        self.model = model.to(device)
        self.device = device
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9)
        self.loss_meter = EpochLossMeter()
        self.history = {"train_loss": [], "epoch_time": []}

    def forward_backward(self, examples, labels):
        self.optimizer.zero_grad()
        outputs = self.model(examples)
        loss = self.criterion(outputs, labels)
        self.loss_meter.update(loss, labels.size(0))  # expect: TML001
        loss.backward()
        self.optimizer.step()
        return loss

    def train_round(self, loader, local_epochs):
        self.model.train()
        for epoch in range(local_epochs):
            self.loss_meter.reset()
            tic = time.perf_counter()
            for examples, labels in loader:
                examples = examples.to(self.device)
                labels = labels.to(self.device)
                self.forward_backward(examples, labels)
            self.history["train_loss"].append(self.loss_meter.average)
            self.history["epoch_time"].append(time.perf_counter() - tic)
        return {k: v.detach().cpu() for k, v in self.model.state_dict().items()}


def federated_round(global_model, client_loaders, local_epochs=2):
    updates = []
    for cid, loader in enumerate(client_loaders):
        trainer = ClientTrainer(global_model)
        weights = trainer.train_round(loader, local_epochs)
        updates.append(weights)
        print(f"client {cid}: loss {trainer.history['train_loss'][-1]:.4f}")
    averaged = {}
    for key in updates[0]:
        averaged[key] = torch.stack([u[key].float() for u in updates]).mean(0)
    global_model.load_state_dict(averaged)
    return global_model
