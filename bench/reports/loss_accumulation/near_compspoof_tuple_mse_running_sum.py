# Source: https://github.com/XuepingZhang/CompSpoof/blob/fff1e2df7d68ab842afa8a478368d34d3d054c98/libs/trainer.py
# Report: audit of an audio anti-spoofing separation trainer whose train() summed the graph-attached second element of compute_loss's (loss, 10*MSE) tuple as a tensor; this is the fixed version: the MSE term is summed as mse.item(), and the loss reaches ProgressReporter.add() as loss.item(), as the repo already does
# Shape: same Trainer/subclass/tuple; the reporter's list and the MSE total both receive Python floats taken from the tuple's tensors inside the loop
# Expect: near-miss: must be silent
import time

import torch as th
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_


class ProgressReporter:
    def __init__(self, logger, period=100):
        self.period, self.logger = period, logger
        self.loss = []
        self.start = time.time()

    def add(self, loss):
        self.loss.append(loss)
        if len(self.loss) % self.period == 0:
            avg = sum(self.loss[-self.period:]) / self.period
            self.logger.info(f"Processed {len(self.loss)} batches (loss = {avg:+.2f})...")

    def report(self):
        n = len(self.loss)
        return {"loss": sum(self.loss) / n, "batches": n, "cost": (time.time() - self.start) / 60}


class Trainer:
    def __init__(self, nnet, optimizer, logger, device="cuda", clip_norm=5.0, logging_period=100):
        self.nnet = nnet.to(device)
        self.optimizer = optimizer
        self.logger = logger
        self.device = device
        self.clip_norm = clip_norm
        self.logging_period = logging_period

    def compute_loss(self, egs, end=False):
        raise NotImplementedError

    def train(self, data_loader, end):
        self.nnet.train()
        reporter = ProgressReporter(self.logger, period=self.logging_period)
        all_mse = 0
        for egs in data_loader:
            egs = {k: v.to(self.device) if th.is_tensor(v) else v for k, v in egs.items()}
            self.optimizer.zero_grad()
            loss, mse = self.compute_loss(egs, end)
            loss.backward()
            if self.clip_norm:
                clip_grad_norm_(self.nnet.parameters(), self.clip_norm)
            self.optimizer.step()
            all_mse = all_mse + mse.item()
            reporter.add(loss.item())
        return reporter.report(), all_mse


class SeparateAndClassifyTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.criterion = nn.MSELoss()
        self.class_weights = th.tensor([0.2, 0.8], device=self.device)

    def compute_loss(self, egs, end=False):
        speech, env, logits_speech, logits_env, logits_all = self.nnet(egs["mix"])
        label = egs["label"].long()
        cls_all = F.cross_entropy(logits_all, label[:, 2], weight=self.class_weights)
        mse = self.criterion(speech, egs["ref_speech"]) + self.criterion(env, egs["ref_env"])
        mask = label[:, 2] == 0
        cls_parts = 0.0
        if mask.any():
            cls_parts = F.cross_entropy(logits_speech[mask], label[mask, 0]) + F.cross_entropy(logits_env[mask], label[mask, 1])
        return cls_all + 10 * mse + cls_parts, 10 * mse

    def run(self, train_loader, num_epochs=50, start_end=10):
        for epoch in range(1, num_epochs + 1):
            tr, mse = self.train(train_loader, epoch >= start_end)
            self.logger.info(f"epoch {epoch}: train = {tr['loss']:+.4f} ({tr['cost']:.2f}m/{tr['batches']}) mse = {mse:.4f}")
            th.save({"epoch": epoch, "model_state_dict": self.nnet.state_dict()}, "last.pt.tar")
