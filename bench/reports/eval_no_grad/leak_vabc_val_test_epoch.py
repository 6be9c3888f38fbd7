# Source: https://github.com/BouncyButton/koi/blob/0b51519f5532cb4715d6a52d29f5cfa5911cb092/koi/trainer/vabc_trainer.py
# Report: audit of a VAE-with-negative-samples (VABC) trainer class: _run_training passes self.val every epoch and self.test at the end through the same _run_epoch, which runs the model and loss with autograd on (no no_grad, no model.eval()) and just skips backward when the split is not train
# Shape: the validation/test pass is its own Trainer method looping over the split's loaders; it forwards the VAE and keeps the last batch's attached losses on local names until the tensorboard log at the end
# Expect: TML003 line 67
from itertools import cycle

import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


def vabc_objective(recon_x, x, mean, log_var, y, kl_weight, gamma_weight):
    # positives are reconstructed, negatives pushed away (anti-reconstruction)
    rec = F.binary_cross_entropy(recon_x, x, reduction="none").sum(dim=1)
    nll = (rec * y).sum() / y.sum().clamp(min=1)
    anti_rec = (torch.exp(-rec) * (1 - y)).sum() / (1 - y).sum().clamp(min=1)
    kld = -0.5 * torch.mean(torch.sum(1 + log_var - mean.pow(2) - log_var.exp(), dim=1))
    loss = nll + kl_weight * kld + gamma_weight * anti_rec
    return nll, kld, loss, anti_rec


class VABCTrainer:
    def __init__(self, model, train, val, test, config, device="cuda"):
        self.model = model.to(device)
        self.train, self.val, self.test = train, val, test
        self.config = config
        self.device = device
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate)
        self.writer = {s: SummaryWriter(f"{config.logs_folder}/{s}") for s in ("train", "val", "test")}

    def _log(self, tag, epoch, **kwargs):
        for k, v in kwargs.items():
            self.writer[tag].add_scalar(k, v, epoch)

    def _batches(self, dataset):
        for (x_p, _), (x_n, _) in zip(dataset.dlp, cycle(dataset.dln)):
            x_p = x_p.to(self.device).reshape(-1, self.config.x_dim)
            x_n = x_n.to(self.device).reshape(-1, self.config.x_dim)
            x = torch.cat((x_p, x_n))
            y = torch.cat((torch.ones(len(x_p)), torch.zeros(len(x_n)))).to(self.device)
            perm = torch.randperm(x.size(0), device=self.device)
            yield x[perm], y[perm]

    def run_training(self):
        for epoch in range(self.config.epochs):
            self.train_epoch(epoch)
            self.evaluate(epoch, self.val)
        self.evaluate(self.config.epochs, self.test)

    def train_epoch(self, epoch):
        self.model.train()
        nll = kld = loss = None
        for x, y in self._batches(self.train):
            recon_x, mean, log_var, z = self.model(x, sample=True)
            nll, kld, loss, _ = vabc_objective(recon_x, x, mean, log_var, y,
                                               self.config.beta, self.config.gamma)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        self._log("train", epoch, nll=nll.item(), kld=kld.item(), loss=loss.item())

    def evaluate(self, epoch, dataset):
        if dataset is None:
            return
        nll = kld = loss = anti_rec = None
        for x, y in self._batches(dataset):
            recon_x, mean, log_var, z = self.model(x, sample=True)  # expect: TML003
            nll, kld, loss, anti_rec = vabc_objective(recon_x, x, mean, log_var, y,
                                                      self.config.beta, self.config.gamma)
        self._log(dataset.split, epoch, nll=nll.item(), kld=kld.item(),
                  loss=loss.item(), anti_rec=anti_rec.item())
