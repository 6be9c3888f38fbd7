# Source: https://github.com/dingo-gw/dingo/blob/main/dingo/core/posterior_models/base_model.py
# Report: realistic one-edit mistake on dingo's correct training epoch: the .detach().item() before LossInfo.update is dropped and the loss tensor is passed to the logger
# Shape: two-level hidden store: LossInfo.update keeps self.loss = loss and passes loss * n to AvgTracker.update, which does self.sum += x; loss_info lives for the whole epoch, so the running sum chains every batch's graph-attached loss
# Expect: TML001 line 70
import time

import torch


class AvgTracker:
    def __init__(self):
        self.sum = 0
        self.N = 0
        self.x = None

    def update(self, x, n=1):
        self.sum += x
        self.N += n
        self.x = x

    def get_avg(self):
        if self.N == 0:
            return float("nan")
        return self.sum / self.N


class LossInfo:
    def __init__(self, epoch, len_dataset, batch_size, mode="Train", print_freq=1):
        self.epoch = epoch
        self.len_dataset = len_dataset
        self.batch_size = batch_size
        self.mode = mode
        self.print_freq = print_freq
        self.loss_tracker = AvgTracker()
        self.loss = None
        self.times = {"Dataloader": AvgTracker(), "Network": AvgTracker()}
        self.t = time.time()

    def update_timer(self, timer_mode="Dataloader"):
        self.times[timer_mode].update(time.time() - self.t)
        self.t = time.time()

    def update(self, loss, n):
        self.loss = loss
        self.loss_tracker.update(loss * n, n)
        self.update_timer(timer_mode="Network")

    def get_avg(self):
        return self.loss_tracker.get_avg()

    def print_info(self, batch_idx):
        if batch_idx % self.print_freq == 0:
            done = min(batch_idx * self.batch_size, self.len_dataset)
            print(f"{self.mode} Epoch: {self.epoch} [{done}/{self.len_dataset}]", end="\t\t")
            print(f"Loss: {self.loss:.3f} ({self.get_avg():.3f})")


def train_epoch(pm, dataloader):
    pm.network.train()
    loss_info = LossInfo(pm.epoch, len(dataloader.dataset), dataloader.batch_size, mode="Train")

    for batch_idx, data in enumerate(dataloader):
        loss_info.update_timer()
        pm.optimizer.zero_grad()
        data = [d.to(pm.device, non_blocking=True) for d in data]
        # negative log-probability of the parameters given the strain context
        loss = pm.loss(data[0], *data[1:])
        loss.backward()
        pm.optimizer.step()
        loss_info.update(loss, len(data[0]))  # expect: TML001
        loss_info.print_info(batch_idx)

    return loss_info.get_avg()


def test_epoch(pm, dataloader):
    with torch.no_grad():
        pm.network.eval()
        loss_info = LossInfo(pm.epoch, len(dataloader.dataset), dataloader.batch_size, mode="Test")
        for batch_idx, data in enumerate(dataloader):
            loss_info.update_timer()
            data = [d.to(pm.device, non_blocking=True) for d in data]
            loss = pm.loss(data[0], *data[1:])
            loss_info.update(loss.item(), len(data[0]))
            loss_info.print_info(batch_idx)
        return loss_info.get_avg()
