# Source: https://github.com/qwertimer1/framework/blob/2dd2f5b3585d47c67f58e11fc8cf27f8293619e1/loss.py
# Report: audit: the RollingLoss callback keeps an exponential moving average of the batch loss on the Phase object and appends the debiased value to phase.losses every batch; the repo feeds it loss.item(), this variant hands it the loss tensor, so the EMA chains every step's graph and phase.losses keeps them all
# Shape: Phase holds rolling_loss/losses, a RollingLoss callback updates them in batch_ended(phase, batch_loss), and the generic train() loop calls it once per batch
# Expect: TML001 line 64
from collections import OrderedDict

import torch
import torch.nn.functional as F


class Phase:
    """One pass over a loader (train or valid) and the statistics it collects."""

    def __init__(self, name, loader, grad=True):
        self.name = name
        self.loader = loader
        self.grad = grad
        self.batch_index = 0
        self.rolling_loss = 0
        self.losses = []
        self.metrics = OrderedDict()

    @property
    def last_loss(self):
        return self.losses[-1] if self.losses else None

    def update(self, loss):
        self.losses.append(loss)

    def update_metric(self, name, value):
        self.metrics.setdefault(name, []).append(value)


class RollingLoss:
    def __init__(self, smooth=0.98):
        self.smooth = smooth

    def batch_ended(self, phase, batch_loss):
        a = self.smooth
        phase.rolling_loss = a * phase.rolling_loss + (1 - a) * batch_loss
        phase.update(phase.rolling_loss / (1 - a ** phase.batch_index))

    def epoch_ended(self, phases):
        for phase in phases:
            phase.update_metric("loss", phase.last_loss)


def train(model, opt, phases, epochs=1, device="cuda", loss_fn=F.nll_loss):
    model.to(device)
    rolling = RollingLoss()
    for epoch in range(1, epochs + 1):
        for phase in phases:
            model.train(phase.grad)
            for x, y in phase.loader:
                phase.batch_index += 1
                x, y = x.to(device), y.to(device)
                with torch.set_grad_enabled(phase.grad):
                    out = model(x)
                    loss = loss_fn(out, y)
                if phase.grad:
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                rolling.batch_ended(phase, loss)  # expect: TML001
        rolling.epoch_ended(phases)
        print(epoch, {p.name: float(p.last_loss) for p in phases})
    return phases


def make_phases(train_loader, valid_loader):
    return [Phase("train", train_loader, grad=True),
            Phase("valid", valid_loader, grad=False)]
