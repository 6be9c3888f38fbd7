# Source: https://github.com/johnolafenwa/TorchFusion/blob/04d64f660b5fba5485e76fc5b39dcf8028707274/torchfusion/gan/learners/learners.py
# Report: Fixed version of the TorchFusion GAN learner: the running losses are accumulated from detached copies of the step losses.
# Shape: loss.detach().cpu() breaks the history before add_ into self.*_running_loss, so the running tensors stay plain leaves holding one scalar each.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch import distributions


class GanLearnerBase:
    def __init__(self, gen_model, disc_model, latent_size=100):
        self.gen_model = gen_model.cuda()
        self.disc_model = disc_model.cuda()
        self.latent_size = latent_size
        self.dist = distributions.Normal(0, 1)
        self.bce = nn.BCELoss()
        self.gen_running_loss = None
        self.disc_running_loss = None
        self.history = {"gen_loss": [], "disc_loss": []}

    def fit(self, loader, gen_opt, disc_opt, num_epochs=10, disc_steps=1):
        self.gen_opt, self.disc_opt = gen_opt, disc_opt
        for epoch in range(num_epochs):
            self.gen_running_loss = torch.Tensor([0.0])
            self.disc_running_loss = torch.Tensor([0.0])
            seen_d, seen_g = 0, 0
            gen_loss, disc_loss = 0.0, 0.0
            for i, batch in enumerate(loader):
                seen_d += batch[0].size(0)
                self._disc_step(batch)
                disc_loss = self.disc_running_loss.item() / seen_d
                if (i + 1) % disc_steps == 0:
                    self._gen_step(batch)
                    seen_g += batch[0].size(0)
                    gen_loss = self.gen_running_loss.item() / seen_g
            self.history["disc_loss"].append(disc_loss)
            self.history["gen_loss"].append(gen_loss)

    def _set_trainable(self, module, flag):
        for p in module.parameters():
            p.requires_grad = flag

    def _sample_source(self, n):
        return self.dist.sample((n, self.latent_size)).cuda()


class StandardGanLearner(GanLearnerBase):
    def _disc_loss(self, real_preds, fake_preds):
        ones = torch.ones_like(real_preds)
        zeros = torch.zeros_like(fake_preds)
        return self.bce(real_preds, ones) + self.bce(fake_preds, zeros)

    def _disc_step(self, batch):
        self._set_trainable(self.disc_model, True)
        self._set_trainable(self.gen_model, False)
        self.disc_opt.zero_grad()
        x = batch[0].cuda()
        n = x.size(0)
        real_out = self.disc_model(x)
        generated = self.gen_model(self._sample_source(n))
        fake_out = self.disc_model(generated.detach())
        loss = self._disc_loss(real_out, fake_out)
        loss.backward()
        self.disc_opt.step()
        self.disc_running_loss.add_(loss.detach().cpu() * n)

    def _gen_step(self, batch):
        self._set_trainable(self.gen_model, True)
        self._set_trainable(self.disc_model, False)
        self.gen_opt.zero_grad()
        n = batch[0].size(0)
        fake = self.gen_model(self._sample_source(n))
        preds = self.disc_model(fake)
        loss = self.bce(preds, torch.ones_like(preds))
        loss.backward()
        self.gen_opt.step()
        self.gen_running_loss.add_(loss.detach().cpu() * n)
