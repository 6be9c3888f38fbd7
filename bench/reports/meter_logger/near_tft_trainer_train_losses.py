# Source: https://github.com/lepa5722/OracleChatBot/blob/main/trainer.py
# Report: TFT Trainer keeps per-step training losses on self.train_losses for the progress bar and TensorBoard, reduced with loss.item(); test() runs under torch.no_grad()
# Shape: self.train_losses outlives every step but only receives Python floats (loss.item()); the test metrics lists receive floats/numpy arrays computed under no_grad
# Expect: near-miss: must be silent
import logging
from time import time

import numpy as np
import torch
from torch import optim
from torch.utils.tensorboard import SummaryWriter


def quantile_trend_loss(output, target, quantiles=(0.1, 0.5, 0.9)):
    losses = []
    for i, q in enumerate(quantiles):
        err = target - output[..., i]
        losses.append(torch.max((q - 1) * err, q * err).mean())
    trend = (torch.diff(output[..., 1], dim=1) - torch.diff(target, dim=1)).abs().mean()
    return sum(losses) + trend


class Trainer:
    def __init__(self, cnf, model, train_loader, test_loader):
        self.cnf = cnf
        self.model = model.to("cuda")
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.optimizer = optim.Adam(self.model.parameters(), lr=cnf.lr, weight_decay=1e-5)
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(
            self.optimizer, max_lr=0.002, total_steps=cnf.epochs * len(train_loader), pct_start=0.3)
        self.sw = SummaryWriter(cnf.exp_log_path)
        self.train_losses = []
        self.test_loss = []
        self.test_smape = []
        self.epoch = 0
        self.best_test_loss = None

    def train(self):
        start_time = time()
        self.model.train()
        times = []
        for step, sample in enumerate(self.train_loader):
            t = time()
            self.optimizer.zero_grad()
            x = sample["inputs"].float().to("cuda")
            output, _, attention = self.model(x)
            loss = quantile_trend_loss(output, sample["outputs"].squeeze().float().to("cuda"))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cnf.max_gradient_norm)
            self.train_losses.append(loss.item())
            self.optimizer.step()
            self.scheduler.step()
            times.append(time() - t)
            if self.cnf.log_each_step:
                print(f"\rLoss: {np.mean(self.train_losses):.6f} | {1 / np.mean(times):5.2f} step/s", end="")
        mean_epoch_loss = np.mean(self.train_losses)
        logging.info(f"Epoch {self.epoch}: Train Loss: {mean_epoch_loss:.6f}")
        self.sw.add_scalar("train_loss", mean_epoch_loss, self.epoch)
        self.train_losses = []
        print(f" | T: {time() - start_time:.2f} s")

    def test(self):
        self.model.eval()
        self.test_loss = []
        self.test_smape = []
        with torch.no_grad():
            for step, sample in enumerate(self.test_loader):
                x = sample["inputs"].float().to("cuda")
                output, _, attention = self.model(x)
                y = sample["outputs"].to("cuda").squeeze(-1)
                loss = quantile_trend_loss(output, y)
                p50 = output[..., 1].detach().cpu().numpy()
                target = y.detach().cpu().numpy()
                smape = np.mean(2 * np.abs(p50 - target) / (np.abs(p50) + np.abs(target) + 1e-8))
                self.test_loss.append(loss.item())
                self.test_smape.append(smape)
        mean_test_loss = np.mean(self.test_loss)
        self.sw.add_scalar("test_loss", mean_test_loss, self.epoch)
        self.sw.add_scalar("test_smape", np.mean(self.test_smape), self.epoch)
        if self.best_test_loss is None or mean_test_loss < self.best_test_loss:
            self.best_test_loss = mean_test_loss
            torch.save(self.model.state_dict(), f"{self.cnf.exp_name}_best.pth")

    def run(self):
        for _ in range(self.cnf.epochs):
            self.train()
            self.test()
            self.epoch += 1
