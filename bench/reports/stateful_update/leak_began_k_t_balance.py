# Source: https://github.com/carpedm20/BEGAN-pytorch/blob/487d7fc1403772c307f2bb16f9fb637a038175c1/trainer.py
# Report: audit of the BEGAN trainer: the equilibrium weight k_t is updated every step from gamma * L(x) - L(G(z)); the repository reads the balance through .data[0] (a plain number), this variant keeps it as a tensor, the slip it avoided
# Shape: k_t is loop-carried and graph-attached, so each step's discriminator loss multiplies into the previous step's graph; retain_graph=True is then needed to backward at all and the chain grows every step
# Expect: TML005 line 60; TML006 line 55
from collections import deque

import numpy as np
import torch
import torch.nn.functional as F


class BEGANTrainer:
    def __init__(self, G, D, data_loader, config, device="cuda"):
        self.G, self.D = G.to(device), D.to(device)
        self.data_loader = data_loader
        self.device = device
        self.gamma = config.gamma
        self.lambda_k = config.lambda_k
        self.lr = config.lr
        self.z_num = config.z_num
        self.log_step = config.log_step
        self.lr_update_step = config.lr_update_step
        self.max_step = config.max_step

    def make_optims(self, lr):
        g_optim = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.999))
        d_optim = torch.optim.Adam(self.D.parameters(), lr=lr, betas=(0.5, 0.999))
        return g_optim, d_optim

    def next_batch(self, it):
        try:
            return next(it), it
        except StopIteration:
            it = iter(self.data_loader)
            return next(it), it

    def train(self, summary):
        g_optim, d_optim = self.make_optims(self.lr)
        data_iter = iter(self.data_loader)
        k_t = 0.0
        prev_measure = 1.0
        measure_history = deque([0.0] * self.lr_update_step, maxlen=self.lr_update_step)
        for step in range(self.max_step):
            x, data_iter = self.next_batch(data_iter)
            x = x.to(self.device)
            self.G.zero_grad()
            self.D.zero_grad()
            z = torch.randn(x.size(0), self.z_num, device=self.device)
            fake = self.G(z)
            ae_x, ae_fake_d, ae_fake_g = self.D(x), self.D(fake.detach()), self.D(fake)
            d_loss_real = F.l1_loss(ae_x, x)
            d_loss_fake = F.l1_loss(ae_fake_d, fake.detach())
            d_loss = d_loss_real - k_t * d_loss_fake
            g_loss = F.l1_loss(fake, ae_fake_g)
            (d_loss + g_loss).backward(retain_graph=True)  # expect: TML006
            g_optim.step()
            d_optim.step()

            balance = self.gamma * d_loss_real - d_loss_fake
            k_t = (k_t + self.lambda_k * balance).clamp(0.0, 1.0)  # expect: TML005
            measure = d_loss_real.item() + abs(balance.item())
            measure_history.append(measure)

            if step % self.log_step == 0:
                summary({"loss/D": d_loss.item(), "loss/G": g_loss.item(),
                         "misc/measure": measure, "misc/k_t": float(k_t)}, step)
            if step % self.lr_update_step == self.lr_update_step - 1:
                cur_measure = float(np.mean(measure_history))
                if cur_measure > prev_measure * 0.9999:
                    self.lr *= 0.5
                    g_optim, d_optim = self.make_optims(self.lr)
                prev_measure = cur_measure
