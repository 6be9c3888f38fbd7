# Source: https://github.com/ClarkXu0625/ComputerVision/blob/976daa7f115b22edb2886d0f8ba5e4af16ab5ebe/Projects/cosi-159-01-main/train.py
# Report: audited MNIST Trainer: an AverageMeter (utils.AverageMeter, self.sum += val * n) tracks the epoch loss from loss.item()
# Shape: as in the repository, loss.item() is handed to the meter, so update() only keeps Python floats; the meter outlives the loop but holds no tensor
# Expect: near-miss: must be silent
import os
import time

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader


class AverageMeter:
    """Computes and stores the average and current value."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.sum = 0
        self.count = 0
        self.avg = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        if self.count > 0:
            self.avg = self.sum / self.count


class Trainer:
    """Trainer for MNIST classification."""

    def __init__(self, model: nn.Module):
        self._model = model

    def train(self, train_loader: DataLoader, epochs: int, lr: float, save_dir: str) -> None:
        optimizer = optim.SGD(params=self._model.parameters(), lr=lr)
        loss_track = AverageMeter()
        self._model.train()

        print("Start training...")
        for i in range(epochs):
            tik = time.time()
            loss_track.reset()
            for data, target in train_loader:
                optimizer.zero_grad()
                output = self._model(data)

                loss = F.nll_loss(output, target)
                loss.backward()
                optimizer.step()

                loss_track.update(loss.item(), n=data.size(0))

            elapse = time.time() - tik
            print("Epoch: [%d/%d]; Time: %.2f; Loss: %.5f" % (i + 1, epochs, elapse, loss_track.avg))

        print("Training completed, saving model to %s" % save_dir)
        os.makedirs(save_dir, exist_ok=True)
        torch.save(self._model.state_dict(), os.path.join(save_dir, "mnist.pth"))
