# Source: https://github.com/THUNLP-MT/MEAN/blob/da34697b06c68f99eb634e35263f7da2151107f2/trainer/abs_trainer.py
# Report: audit of an antibody-design trainer base class: train_step hands the graph-attached loss to self.log(), which writes it or, with val=True, appends it into self.writer_buffer until the epoch-end flush; the repo converts tensors with value.cpu().item() at the top of log(), this near-miss buffers the training loss per epoch and keeps that conversion
# Shape: train_step still hands the graph-attached snll to self.log(..., val=True) every step, but Trainer.log turns any tensor into a Python float before it reaches the list on self
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm


class Trainer:
    def __init__(self, model, train_loader, valid_loader, save_dir, lr=1e-3, max_epoch=20, grad_clip=None):
        self.model = model
        self.train_loader, self.valid_loader = train_loader, valid_loader
        self.save_dir, self.lr, self.max_epoch, self.grad_clip = save_dir, lr, max_epoch, grad_clip
        self.optimizer = self.get_optimizer()
        self.writer = None
        self.writer_buffer = {}
        self.global_step = 0
        self.epoch = 0
        self.best = None

    def _train_epoch(self, device):
        t_iter = tqdm(self.train_loader)
        for batch in t_iter:
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = self.train_step(batch, self.global_step)
            self.optimizer.zero_grad()
            loss.backward()
            if self.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
            self.optimizer.step()
            t_iter.set_postfix(loss=loss.item())
            self.global_step += 1

    def _valid_epoch(self, device):
        metric_arr = []
        self.model.eval()
        with torch.no_grad():
            for batch in tqdm(self.valid_loader):
                batch = {k: v.to(device) for k, v in batch.items()}
                metric_arr.append(self.valid_step(batch, self.global_step).item())
        self.model.train()
        valid_metric = float(np.mean(metric_arr))
        if self.best is None or valid_metric < self.best:
            self.best = valid_metric
            torch.save(self.model.state_dict(), os.path.join(self.save_dir, f"epoch{self.epoch}.ckpt"))
        for name, values in self.writer_buffer.items():
            self.writer.add_scalar(name, float(sum(values) / len(values)), self.epoch)
        self.writer_buffer = {}

    def train(self, device):
        os.makedirs(self.save_dir, exist_ok=True)
        self.writer = SummaryWriter(self.save_dir)
        self.model.to(device)
        for _ in range(self.max_epoch):
            self._train_epoch(device)
            self._valid_epoch(device)
            self.epoch += 1

    def log(self, name, value, step, val=False):
        if isinstance(value, torch.Tensor):
            value = value.cpu().item()
        if val:
            self.writer_buffer.setdefault(name, []).append(value)
        else:
            self.writer.add_scalar(name, value, step)

    def get_optimizer(self):
        return torch.optim.Adam(self.model.parameters(), lr=self.lr)

    def train_step(self, batch, batch_idx):
        raise NotImplementedError()

    def valid_step(self, batch, batch_idx):
        raise NotImplementedError()


class Seq2SeqTrainer(Trainer):
    def train_step(self, batch, batch_idx):
        snll = self.model(batch["S"], batch["L"], batch["mask"])
        self.log("PPL/train", snll.exp().item(), batch_idx)
        self.log("Loss/train", snll, batch_idx, val=True)
        return snll

    def valid_step(self, batch, batch_idx):
        snll = self.model(batch["S"], batch["L"], batch["mask"])
        self.log("Loss/valid", snll.item(), batch_idx, val=True)
        return snll
