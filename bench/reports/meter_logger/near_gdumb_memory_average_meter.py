# Source: https://github.com/sobir-git/continual-learning/blob/01846395c4ffdde52d358527050eac3d1bd9a1a5/gdumb/gdumb.py
# Report: audit of the GDumb continual-learning baseline: train_model passes the raw attached loss to AverageMeter.update each step, but the repo's meter (utils/utils.py) converts any 0-dim tensor with .item() before summing, so nothing is kept
# Shape: the meter's update() turns a scalar tensor into a float before adding it to self.sum; the call site passes the tensor as the repository does
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum = 0.0
        self.n = 0

    def update(self, value, n=1):
        if isinstance(value, torch.Tensor) and value.dim() == 0:
            value = value.item()
        self.sum = self.sum + value * n
        self.n += n

    @property
    def avg(self):
        return self.sum / self.n if self.n else float("nan")


@torch.no_grad()
def test_model(model, dataset, batch_size, device):
    criterion = nn.CrossEntropyLoss()
    loss_meter, acc_meter = AverageMeter(), AverageMeter()
    for inputs, labels, _ in DataLoader(dataset, batch_size=batch_size):
        inputs, labels = inputs.to(device), labels.to(device)
        outputs = model(inputs)
        loss_meter.update(criterion(outputs, labels), len(inputs))
        acc_meter.update((outputs.argmax(1) == labels).float().mean(), len(inputs))
    return loss_meter.avg, acc_meter.avg


def train_model(model, memory_set, val_set, cfg, log, device="cuda"):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=cfg["lr_step"], gamma=0.5)
    criterion = nn.CrossEntropyLoss()
    loader = DataLoader(memory_set, batch_size=cfg["batch_size"], shuffle=True, num_workers=4)
    for epoch in range(cfg["epochs"]):
        model.train()
        loss_meter = AverageMeter()
        for inputs, labels, _ in loader:
            inputs, labels = inputs.to(device), labels.to(device)
            if np.random.rand() < cfg["mix_prob"]:
                perm = torch.randperm(inputs.size(0), device=device)
                lam = float(np.random.beta(1.0, 1.0))
                outputs = model(lam * inputs + (1 - lam) * inputs[perm])
                loss = lam * criterion(outputs, labels) + (1 - lam) * criterion(outputs, labels[perm])
            else:
                loss = criterion(model(inputs), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_meter.update(loss, inputs.size(0))
        log({"epoch": epoch, "train_loss": loss_meter.avg})
        if len(val_set) > 0:
            val_loss, val_acc = test_model(model, val_set, cfg["batch_size"], device)
            log({"val_loss": val_loss, "val_acc": val_acc})
        scheduler.step()


def run_phases(model, phases, memory, cfg, log):
    for phase, new_samples in enumerate(phases, start=1):
        memory.add(new_samples)
        train_model(model, memory.train_split(), memory.val_split(), cfg, log)
        log({"phase": phase, "test": test_model(model, memory.test_split(), cfg["batch_size"], "cuda")})
