# Source: https://github.com/jakeoneijk/TorchJaekwon/blob/050b07c8fdd80fec60406587849775e817594480/TorchJaekwon/Train/Trainer/Trainer.py
# Report: audit of an audio-generation Trainer base class: the step's loss travels out of run_step and is handed to metric_update(), which keeps one AverageMeter per loss name for the whole validation epoch; the helper calls loss.item() before AverageMeter.update, and validation runs under torch.no_grad() in fit(); correct as written
# Shape: run_step returns a dict (loss tensor + batch size); run_epoch passes out["loss"] to self.metric_update(metric, name, loss, n), whose body does meter.update(loss.item(), n); metric dict lives for the epoch, logged through a writer
# Expect: near-miss: must be silent
from enum import Enum

import torch
from torch.utils.tensorboard import SummaryWriter


class TrainState(Enum):
    TRAIN = "train"
    VALIDATE = "valid"


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Trainer:
    def __init__(self, model, optimizer, loaders, device="cuda", total_epoch=100, clip=1.0):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.loaders = loaders
        self.device = device
        self.total_epoch = total_epoch
        self.clip = clip
        self.global_step = 0
        self.writer = SummaryWriter("runs/trainer")

    def run_step(self, data):
        audio = data["audio"].float().to(self.device)
        cond = data["cond"].float().to(self.device)
        loss = self.model(audio, cond)
        return {"loss": loss, "batch_size": audio.shape[0]}

    def metric_update(self, metric, loss_name, loss, batch_size):
        if loss_name not in metric:
            metric[loss_name] = AverageMeter()
        metric[loss_name].update(loss.item(), batch_size)
        return metric

    def backprop(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optimizer.step()

    def log_metric(self, metric, state, x):
        for name, meter in metric.items():
            self.writer.add_scalar(f"{state.value}/{name}", meter.avg, x)

    def run_epoch(self, loader, state, epoch):
        self.model.train() if state == TrainState.TRAIN else self.model.eval()
        metric = {}
        for data in loader:
            out = self.run_step(data)
            if torch.isnan(out["loss"]).any():
                raise ValueError(f"loss is nan at step {self.global_step}")
            self.metric_update(metric, "loss", out["loss"], out["batch_size"])
            if state == TrainState.TRAIN:
                self.backprop(out["loss"])
                self.global_step += 1
        self.log_metric(metric, state, epoch)
        return metric

    def fit(self):
        best = None
        for epoch in range(self.total_epoch):
            self.run_epoch(self.loaders["train"], TrainState.TRAIN, epoch)
            with torch.no_grad():
                valid_metric = self.run_epoch(self.loaders["valid"], TrainState.VALIDATE, epoch)
            if best is None or valid_metric["loss"].avg < best:
                best = valid_metric["loss"].avg
                torch.save(self.model.state_dict(), "pretrained_best_epoch.pth")
