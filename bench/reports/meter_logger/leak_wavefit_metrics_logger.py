# Source: https://github.com/yukara-ikemiya/wavefit-pytorch/blob/3d9d35a6c21c28040b3ae2297a9aebc795ca7c8f/src/trainer.py
# Report: GAN vocoder trainer (accelerate) feeds per-step loss dicts to two MetricsLogger objects; here the logger sums raw values (as in the author's other copy of it) and run_step returns the loss dict undetached
# Shape: run_step() returns losses whose summed 'mrstft' and 'D/loss' entries are graph-attached; logger.add() keeps them and += chains every step's graph until pop()
# Expect: TML001 lines 52, 53
import typing as tp

import torch


class MetricsLogger:
    def __init__(self):
        self.counts = {}
        self.metrics = {}

    def add(self, metrics: tp.Dict[str, torch.Tensor]) -> None:
        for k, v in metrics.items():
            if k in self.counts:
                self.counts[k] += 1
                self.metrics[k] += v
            else:
                self.counts[k] = 1
                self.metrics[k] = v

    def pop(self, mean: bool = True) -> tp.Dict[str, torch.Tensor]:
        out = {k: (v / self.counts[k] if mean else v) for k, v in self.metrics.items()}
        self.counts, self.metrics = {}, {}
        return out


class Trainer:
    def __init__(self, G, D, loss_modules, opt_G, opt_D, train_dl, test_dl, accel, cfg):
        self.G, self.D = G, D
        self.loss_modules = loss_modules
        self.opt_G, self.opt_D = opt_G, opt_D
        self.train_dl, self.test_dl = train_dl, test_dl
        self.accel = accel
        self.cfg = cfg
        self.logger = MetricsLogger()
        self.logger_print = MetricsLogger()
        self.logger_test = MetricsLogger()
        self.step = 0

    def start_training(self):
        self.G.train()
        self.D.train()
        while True:
            for batch in self.train_dl:
                metrics = self.run_step(batch)
                if self.step % self.cfg.n_step_test == 0:
                    self._test()
                if self.accel.is_main_process:
                    self.logger.add(metrics)  # expect: TML001
                    self.logger_print.add(metrics)  # expect: TML001
                    if self.step % self.cfg.n_step_log == 0:
                        self.accel.log(self.logger.pop(), step=self.step)
                    if self.step % self.cfg.n_step_print == 0:
                        print({k: v.item() for k, v in self.logger_print.pop().items()})
                self.step += 1

    def run_step(self, batch, train: bool = True):
        audios, mel = batch
        if train:
            self.opt_G.zero_grad()
        preds = self.G(mel)
        losses = {}
        for idx, pred in enumerate(preds):
            for k, v in self.loss_modules["mrstft"](pred, audios).items():
                losses[k] = losses.get(k, 0.0) + v / len(preds)
                losses[f"{k}/iter-{idx + 1}"] = v.detach()
        loss_g = losses["mrstft"] + self.D.compute_G_loss(preds[-1], audios)
        if train:
            self.accel.backward(loss_g)
            self.opt_G.step()
        losses["G/loss"] = loss_g.detach()

        if train:
            self.opt_D.zero_grad()
        loss_d_real = self.D.compute_D_loss(audios, mode="real")
        loss_d_fake = self.D.compute_D_loss(preds[-1].detach(), mode="fake")
        losses["D/loss"] = loss_d_real + loss_d_fake
        if train:
            self.accel.backward(losses["D/loss"])
            self.opt_D.step()

        return losses

    @torch.no_grad()
    def _test(self):
        self.G.eval()
        self.D.eval()
        for batch in self.test_dl:
            metrics = self.run_step(batch, train=False)
            self.logger_test.add(metrics)
        metrics = {k: self.accel.gather(v).mean() for k, v in self.logger_test.pop().items()}
        self.accel.log({f"test/{k}": v for k, v in metrics.items()}, step=self.step)
        self.G.train()
        self.D.train()
