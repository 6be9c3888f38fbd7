# Source: https://github.com/mrluin/ESFNet-Pytorch/blob/2b865816fe28d9867d8ad71d4f03201c2d6411de/BaseTrainer.py
# Report: the resume path as requested in PR #17 of the aerial-image building extraction trainer: torch.load(resume_path, map_location=self.device)
# Shape: map_location sends every stored tensor straight to the trainer's device, so nothing is first materialised on the GPU it was saved from
# Expect: near-miss: must be silent
import math
import os
import time

import torch
import torch.nn as nn
import torch.optim as optim


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    def average(self):
        return self.sum / max(self.count, 1)


def pixel_accuracy(logits, target):
    return (logits.argmax(dim=1) == target).float().mean()


class BaseTrainer:
    def __init__(self, model, config, train_loader, valid_loader, resume_file=None):
        self.config = config
        self.device = torch.device(f"cuda:{config.device_id}") if config.use_gpu else torch.device("cpu")
        self.model = model.to(self.device)
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.loss = nn.CrossEntropyLoss().to(self.device)
        self.optimizer = optim.Adam(self.model.parameters(), lr=config.init_lr)
        self.checkpoint_dir = os.path.join(config.save_dir, config.run_name)
        self.history = {"train": [], "valid": []}
        self.start_epoch = 1
        self.monitor_best = -math.inf
        if resume_file is not None:
            self._resume_ckpt(resume_file)

    def train(self):
        for epoch in range(self.start_epoch, self.config.epochs + 1):
            self.history["train"].append(self._train_epoch(epoch))
            val = self._eval_epoch(epoch)
            self.history["valid"].append(val)
            best = val["acc"] > self.monitor_best
            if best:
                self.monitor_best = val["acc"]
            if best or epoch % self.config.save_period == 0:
                self._save_ckpt(epoch, best)

    def _train_epoch(self, epoch):
        ave_loss, ave_acc = AverageMeter(), AverageMeter()
        self.model.train()
        tic = time.time()
        for data, target in self.train_loader:
            data = data.to(self.device, non_blocking=True)
            target = target.to(self.device, non_blocking=True)
            logits = self.model(data)
            loss = self.loss(logits, target)
            acc = pixel_accuracy(logits, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            ave_loss.update(loss.data.item())
            ave_acc.update(acc.item())
        print(f"epoch {epoch} train loss {ave_loss.average():.4f} ({time.time() - tic:.1f}s)")
        return {"epoch": epoch, "loss": ave_loss.average(), "acc": ave_acc.average()}

    def _eval_epoch(self, epoch):
        ave_loss, ave_acc = AverageMeter(), AverageMeter()
        self.model.eval()
        with torch.no_grad():
            for data, target in self.valid_loader:
                data = data.to(self.device, non_blocking=True)
                target = target.to(self.device, non_blocking=True)
                logits = self.model(data)
                ave_loss.update(self.loss(logits, target).item())
                ave_acc.update(pixel_accuracy(logits, target).item())
        return {"epoch": epoch, "loss": ave_loss.average(), "acc": ave_acc.average()}

    def _save_ckpt(self, epoch, best):
        state = {
            "epoch": epoch,
            "history": self.history,
            "state_dict": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "monitor_best": self.monitor_best,
        }
        name = "checkpoint-best.pth" if best else f"checkpoint-epoch{epoch}.pth"
        torch.save(state, os.path.join(self.checkpoint_dir, name))

    def _resume_ckpt(self, resume_file):
        resume_path = os.path.join(self.checkpoint_dir, resume_file)
        print(f"Loading checkpoint: {resume_path}")
        checkpoint = torch.load(resume_path, map_location=self.device)
        self.start_epoch = checkpoint["epoch"] + 1
        self.monitor_best = checkpoint["monitor_best"]
        self.model.load_state_dict(checkpoint["state_dict"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self.history = checkpoint["history"]
