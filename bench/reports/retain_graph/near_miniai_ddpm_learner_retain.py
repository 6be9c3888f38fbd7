# Source: https://github.com/SadEnjoyer/diffusion/blob/4a53ba5c21897bd978fffd6f5e089f326274ad70/learners/learner.py
# Report: audit of a miniai-style callback Learner used for DDPM training: each batch parks the predictions and the loss on the learner (self.preds, self.loss) for callbacks and calls a plain backward, so backward frees the graph's buffers even though self.preds/self.loss outlive the step (the near-miss follows the repo)
# Shape: TrainLearner.one_epoch loops with `for self.iter, self.batch in ...`, a DDPM callback noisifies the batch, predictions/loss live on self, the step's single backward is a plain one; validation runs under no_grad
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import optim


class CancelBatchException(Exception):
    pass


def run_cbs(cbs, method_nm, learn):
    for cb in sorted(cbs, key=lambda c: getattr(c, "order", 0)):
        method = getattr(cb, method_nm, None)
        if method is not None:
            method(learn)


class DDPMCB:
    order = -1

    def __init__(self, n_steps=1000, beta_min=1e-4, beta_max=0.02):
        self.n_steps = n_steps
        self.alphabar = torch.cumprod(1.0 - torch.linspace(beta_min, beta_max, n_steps), dim=0)

    def before_batch(self, learn):
        x0 = learn.batch[0].to(learn.device)
        t = torch.randint(0, self.n_steps, (x0.shape[0],), device=x0.device)
        ab = self.alphabar.to(x0.device)[t].reshape(-1, 1, 1, 1)
        eps = torch.randn_like(x0)
        learn.batch = ((ab.sqrt() * x0 + (1 - ab).sqrt() * eps, t), eps)


class LossLogCB:
    def before_fit(self, learn):
        self.history = []

    def before_epoch(self, learn):
        self.total, self.n = 0.0, 0

    def after_batch(self, learn):
        self.total += learn.loss.item()
        self.n += 1

    def after_epoch(self, learn):
        self.history.append((learn.epoch, learn.model.training, self.total / max(self.n, 1)))


class TrainLearner:
    def __init__(self, model, dls, loss_func=F.mse_loss, lr=1e-3, cbs=(), opt_func=optim.AdamW, device="cuda"):
        self.model = model.to(device)
        self.dls, self.loss_func, self.lr = dls, loss_func, lr
        self.cbs, self.opt_func, self.device = list(cbs), opt_func, device

    def callback(self, method_nm):
        run_cbs(self.cbs, method_nm, self)

    def one_epoch(self, train):
        self.model.train(train)
        self.dl = self.dls["train"] if train else self.dls["valid"]
        self.callback("before_epoch")
        for self.iter, self.batch in enumerate(self.dl):
            try:
                self.callback("before_batch")
                (xt, t), eps = self.batch
                self.preds = self.model(xt, t)
                self.loss = self.loss_func(self.preds, eps)
                if self.model.training:
                    self.loss.backward()
                    self.opt.step()
                    self.opt.zero_grad()
                self.callback("after_batch")
            except CancelBatchException:
                pass
        self.callback("after_epoch")

    def fit(self, n_epochs):
        self.opt = self.opt_func(self.model.parameters(), self.lr)
        self.callback("before_fit")
        for self.epoch in range(n_epochs):
            self.one_epoch(True)
            with torch.no_grad():
                self.one_epoch(False)
        self.callback("after_fit")
