# Source: https://github.com/casblaauw/NOG5Thesis/blob/2494b7f97162ec441007b418715318ff123716db/netoglyc5/nog5/nog5/train/train.py
# Report: audit of an Optuna-driven trainer whose AverageMeter does `self.sum += val * n`: both the training and the validation meter are fed loss.item(), so the meter only ever accumulates Python floats (the repo's correct shape)
# Shape: same Trainer and module-level AverageMeter; loss_mtr.update(loss.item(), data.size(0)) in the batch loop, the float is what the meter sums and keeps as .val
# Expect: near-miss: must be silent
import optuna
import torch


class AverageMeter:
    """Running average of a scalar."""

    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Trainer:
    def __init__(self, model, loss, optimizer, device, train_loader, valid_loader, writer, trial=None, log_step=50):
        self.model = model
        self.loss = loss
        self.optimizer = optimizer
        self.device = device
        self.train_loader = train_loader
        self.valid_loader = valid_loader
        self.writer = writer
        self.trial = trial
        self.log_step = log_step

    def _to_device(self, data, target, mask):
        return data.to(self.device), target.to(self.device), mask.to(self.device)

    def _train_epoch(self, epoch):
        self.model.train()
        loss_mtr = AverageMeter("loss")
        n_batches = len(self.train_loader)
        for batch_idx, batch in enumerate(self.train_loader):
            data, target, mask = self._to_device(*batch)
            output = self.model(data, mask)
            loss = self.loss(output, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            loss_mtr.update(loss.item(), data.size(0))
            if batch_idx % self.log_step == 0:
                self.writer.add_scalar("batch/loss", loss.item(), epoch * n_batches + batch_idx)
        return loss_mtr.avg

    def _valid_epoch(self, epoch):
        self.model.eval()
        loss_mtr = AverageMeter("val_loss")
        with torch.no_grad():
            for batch in self.valid_loader:
                data, target, mask = self._to_device(*batch)
                loss = self.loss(self.model(data, mask), target)
                loss_mtr.update(loss.item(), data.size(0))
        if self.trial is not None:
            self.trial.report(loss_mtr.avg, epoch)
            if self.trial.should_prune():
                raise optuna.exceptions.TrialPruned()
        return loss_mtr.avg

    def train(self, epochs):
        best = float("inf")
        for epoch in range(epochs):
            train_loss = self._train_epoch(epoch)
            val_loss = self._valid_epoch(epoch)
            self.writer.add_scalar("epoch/loss", train_loss, epoch)
            self.writer.add_scalar("epoch/val_loss", val_loss, epoch)
            best = min(best, val_loss)
        return best
