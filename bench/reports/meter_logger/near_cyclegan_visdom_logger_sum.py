# Source: https://github.com/aitorzip/PyTorch-CycleGAN/blob/84cca46c5db0ab6e6b1ca78de59cfe17f25df399/utils.py
# Report: audit of a CycleGAN trainer whose Logger.log() receives a dict of live generator/discriminator losses every batch and sums them per name until the epoch ends; the logger unwraps every value to a Python number (.data[0], later .data.item()) before adding it, so nothing graph-attached is kept (the repo's shape)
# Shape: same Logger, helper returning a dict of generator losses and loop passing the merged dict of tensors to logger.log; inside log() each value becomes value.data.item() before it is summed into self.losses
# Expect: near-miss: must be silent
import itertools
import sys

import torch
import torch.nn as nn


class Logger:
    def __init__(self, n_epochs, batches_epoch):
        self.n_epochs, self.batches_epoch = n_epochs, batches_epoch
        self.epoch, self.batch = 1, 1
        self.losses = {}
        self.history = {}

    def log(self, losses):
        for name, value in losses.items():
            value = value.data.item()
            if name not in self.losses:
                self.losses[name] = value
            else:
                self.losses[name] += value
        sys.stdout.write("\rEpoch %03d [%04d/%04d]" % (self.epoch, self.batch, self.batches_epoch))
        if self.batch % self.batches_epoch == 0:
            for name, total in self.losses.items():
                self.history.setdefault(name, []).append(float(total) / self.batch)
                self.losses[name] = 0.0
            self.epoch += 1
            self.batch = 1
        else:
            self.batch += 1


def generator_losses(G_AB, G_BA, D_A, D_B, real_A, real_B, gan, l1):
    fake_B, fake_A = G_AB(real_A), G_BA(real_B)
    pred_B, pred_A = D_B(fake_B), D_A(fake_A)
    loss_gan = gan(pred_B, torch.ones_like(pred_B)) + gan(pred_A, torch.ones_like(pred_A))
    loss_cycle = 10.0 * (l1(G_BA(fake_B), real_A) + l1(G_AB(fake_A), real_B))
    loss_idt = 5.0 * (l1(G_AB(real_B), real_B) + l1(G_BA(real_A), real_A))
    total = loss_gan + loss_cycle + loss_idt
    return {"loss_G": total, "loss_G_GAN": loss_gan, "loss_G_cycle": loss_cycle, "loss_G_identity": loss_idt}, fake_A, fake_B


def discriminator_loss(D, real, fake, gan):
    pred_real, pred_fake = D(real), D(fake.detach())
    return 0.5 * (gan(pred_real, torch.ones_like(pred_real)) + gan(pred_fake, torch.zeros_like(pred_fake)))


def train(G_AB, G_BA, D_A, D_B, loader, n_epochs, device="cuda"):
    gan, l1 = nn.MSELoss(), nn.L1Loss()
    opt_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=2e-4, betas=(0.5, 0.999))
    opt_D = torch.optim.Adam(itertools.chain(D_A.parameters(), D_B.parameters()), lr=2e-4, betas=(0.5, 0.999))
    logger = Logger(n_epochs, len(loader))
    for epoch in range(n_epochs):
        for batch in loader:
            real_A, real_B = batch["A"].to(device), batch["B"].to(device)
            opt_G.zero_grad()
            g_losses, fake_A, fake_B = generator_losses(G_AB, G_BA, D_A, D_B, real_A, real_B, gan, l1)
            g_losses["loss_G"].backward()
            opt_G.step()
            opt_D.zero_grad()
            loss_D = discriminator_loss(D_A, real_A, fake_A, gan) + discriminator_loss(D_B, real_B, fake_B, gan)
            loss_D.backward()
            opt_D.step()
            logger.log({**g_losses, "loss_D": loss_D})
        torch.save(G_AB.state_dict(), f"netG_A2B_{epoch}.pth")
    return logger.history
