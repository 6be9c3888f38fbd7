# Source: https://github.com/zhangylch/REANN/blob/main/reann/src/EMA.py
# Report: REANN's EMA helper keeps a shadow copy of every trainable parameter and blends it in after each optimizer step; every blend runs under torch.no_grad().
# Shape: ema.update() runs once per step and rebinds self.shadow[name] = (1-d)*param + d*self.shadow[name]; under no_grad the new shadow has no history, so nothing chains step to step.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class EMA:
    def __init__(self, model, decay):
        self.model = model
        self.decay = decay
        self.shadow = {}
        self.backup = {}
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                if param.requires_grad:
                    self.shadow[name] = param.detach().clone()

    def update(self):
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                if param.requires_grad:
                    self.shadow[name] = (1.0 - self.decay) * param + self.decay * self.shadow[name]

    def apply_shadow(self):
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                if param.requires_grad:
                    self.backup[name] = param.detach().clone()
                    param.copy_(self.shadow[name])

    def restore(self):
        with torch.no_grad():
            for name, param in self.model.named_parameters():
                if param.requires_grad:
                    param.copy_(self.backup[name])
        self.backup = {}


def train_epoch(model, loader, optimizer, loss_fn, ema, device):
    model.train()
    running = 0.0
    for coords, energy in loader:
        coords, energy = coords.to(device), energy.to(device)
        optimizer.zero_grad()
        pred = model(coords)
        loss = loss_fn(pred, energy)
        loss.backward()
        optimizer.step()
        ema.update()
        running += loss.item()
    return running / len(loader)


@torch.no_grad()
def eval_with_ema(model, loader, loss_fn, ema, device):
    ema.apply_shadow()
    model.eval()
    total = 0.0
    for coords, energy in loader:
        coords, energy = coords.to(device), energy.to(device)
        total += loss_fn(model(coords), energy).item()
    ema.restore()
    return total / len(loader)


def run(model, train_loader, val_loader, epochs, device="cuda"):
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    ema = EMA(model, decay=0.999)
    for epoch in range(epochs):
        tr = train_epoch(model, train_loader, optimizer, loss_fn, ema, device)
        va = eval_with_ema(model, val_loader, loss_fn, ema, device)
        print(f"epoch {epoch}: train {tr:.5f} val(ema) {va:.5f}")
