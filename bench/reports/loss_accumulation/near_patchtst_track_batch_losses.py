# Source: https://github.com/yuqinie98/PatchTST/blob/de8d7f0da12f4af1bfe13de3d7fe0b888bd84ea9/PatchTST_self_supervised/src/callback/tracking.py
# Report: PatchTST (time-series forecasting) fastai-style Learner: TrackTrainingCB.accumulate, run by the after_batch_train / after_batch_valid callbacks, stores each batch's loss in batch_recorder['batch_losses'] and sums them once per epoch (the repo stores self.loss.detach() * bs).
# Shape: as in the repo: the learner's loss is detached before it is appended to the per-epoch batch_losses list (a detached scalar per batch, summed with .item() at epoch end); predictions are kept as .detach().cpu() copies.
# Expect: near-miss: must be silent
import time

import torch
from torch import nn
from torch.optim import Adam


class Callback:
    learner = None

    def __getattr__(self, name):
        return None


class TrackTrainingCB(Callback):
    def before_fit(self):
        self.recorder = {"epoch": [], "train_loss": [], "valid_loss": []}
        self.mean_reduction_ = getattr(self.learner.loss_func, "reduction", "mean") == "mean"

    def initialize_batch_recorder(self):
        self.batch_recorder = {"n_samples": [], "batch_losses": []}
        self.preds, self.targs = [], []

    def before_epoch_train(self):
        self.initialize_batch_recorder()

    def before_epoch_valid(self):
        self.initialize_batch_recorder()

    def after_batch_train(self):
        self.accumulate()

    def after_batch_valid(self):
        self.accumulate()

    def accumulate(self):
        xb, yb = self.learner.batch
        bs = len(xb)
        self.batch_recorder["n_samples"].append(bs)
        loss = self.learner.loss.detach() * bs if self.mean_reduction_ else self.learner.loss.detach()
        self.batch_recorder["batch_losses"].append(loss)
        self.preds.append(self.learner.pred.detach().cpu())
        self.targs.append(yb.detach().cpu())

    def compute_scores(self):
        n = sum(self.batch_recorder["n_samples"])
        return {"loss": sum(self.batch_recorder["batch_losses"]).item() / n}

    def after_epoch_train(self):
        self.recorder["train_loss"].append(self.compute_scores()["loss"])

    def after_epoch_valid(self):
        self.recorder["valid_loss"].append(self.compute_scores()["loss"])

    def after_epoch(self):
        self.recorder["epoch"].append(self.learner.epoch)


class Learner:
    def __init__(self, dls, model, loss_func=None, lr=1e-3, cbs=None, opt_func=Adam):
        self.model, self.dls, self.loss_func, self.lr = model, dls, loss_func, lr
        self.opt = opt_func(self.model.parameters(), lr)
        self.cbs = [TrackTrainingCB()] + list(cbs or [])
        for cb in self.cbs:
            cb.learner = self

    def __call__(self, name):
        for cb in self.cbs:
            attr = getattr(cb, name)
            if attr is not None:
                attr()

    def fit(self, n_epochs):
        self("before_fit")
        for self.epoch in range(n_epochs):
            start = time.time()
            self.epoch_train()
            self.epoch_validate()
            self("after_epoch")
            print(self.epoch, f"{time.time() - start:.1f}s", self.cbs[0].recorder["train_loss"][-1])

    def epoch_train(self):
        self("before_epoch_train")
        self.model.train()
        self.all_batches(self.dls.train, "train")
        self("after_epoch_train")

    def epoch_validate(self):
        self("before_epoch_valid")
        self.model.eval()
        with torch.no_grad():
            self.all_batches(self.dls.valid, "valid")
        self("after_epoch_valid")

    def all_batches(self, dl, type_):
        for num, batch in enumerate(dl):
            self.iter, self.batch = num, batch
            if type_ == "train":
                self._do_batch_train()
                self("after_batch_train")
            else:
                self.pred, self.loss = self.step(batch)
                self("after_batch_valid")

    def step(self, batch):
        self.xb, self.yb = batch
        pred = self.model(self.xb)
        loss = self.loss_func(pred, self.yb)
        return pred, loss

    def _do_batch_train(self):
        self.pred, self.loss = self.step(self.batch)
        self.opt.zero_grad()
        self.loss.backward()
        self.opt.step()


def pretrain(dls, model: nn.Module, n_epochs=10):
    learn = Learner(dls, model.cuda(), loss_func=nn.MSELoss(reduction="mean"), lr=1e-4)
    learn.fit(n_epochs)
    return learn
