# Source: https://github.com/hikaruhotta/M2M-VC-CycleGAN/blob/2b92672cdce240d83e6167e27c8ef3e0692cd24c/cycleGAN_VC3/train.py
# Report: audited training code: the CycleGAN-VC3 voice-conversion trainer hands its generator/discriminator losses to TrainLogger.log_iter, whose AverageMeter.update does self.sum += val * n; the repository passes g_loss.item() / d_loss.item()
# Shape: the losses are handed to the logger as tensors (no .item()), so every meter's running sum chains the graph of each step; the meters are reset only when an epoch ends
# Expect: TML001 line 92
from time import time

import torch


class AverageMeter(object):
    """Computes and stores the average and current value."""

    def __init__(self):
        self.avg = 0
        self.val = 0
        self.sum = 0
        self.count = 0

    def reset(self):
        self.__init__()

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class TrainLogger(object):
    def __init__(self, batch_size, steps_per_print, writer):
        self.batch_size = batch_size
        self.steps_per_print = steps_per_print
        self.summary_writer = writer
        self.iter = 0
        self.global_step = 0
        self.epoch = 1
        self.loss_meters = None

    def start_iter(self):
        self.iter_start_time = time()

    def log_iter(self, loss_dict):
        if self.loss_meters is None:
            self.loss_meters = {name: AverageMeter() for name in loss_dict}
        for loss_name, meter in self.loss_meters.items():
            meter.update(loss_dict[loss_name], self.batch_size)
        if self.iter % self.steps_per_print == 0:
            message = '(epoch: %d, iter: %d) ' % (self.epoch, self.iter)
            for loss_name, meter in self.loss_meters.items():
                message += '%s: %.3f ' % (loss_name, meter.avg)
            print(message)

    def end_iter(self):
        self.iter += self.batch_size
        self.global_step += self.batch_size

    def end_epoch(self):
        for meter in (self.loss_meters or {}).values():
            meter.reset()
        self.iter = 0
        self.epoch += 1


def train_epoch(gen_A2B, gen_B2A, disc_A, disc_B, g_opt, d_opt, loader, logger, device,
                cycle_lambda=10.0, identity_lambda=5.0):
    for real_A, real_B in loader:
        logger.start_iter()
        real_A = real_A.to(device, dtype=torch.float)
        real_B = real_B.to(device, dtype=torch.float)

        fake_B = gen_A2B(real_A)
        fake_A = gen_B2A(real_B)
        cycle_loss = torch.mean(torch.abs(real_A - gen_B2A(fake_B))) + \
            torch.mean(torch.abs(real_B - gen_A2B(fake_A)))
        identity_loss = torch.mean(torch.abs(real_A - gen_B2A(real_A))) + \
            torch.mean(torch.abs(real_B - gen_A2B(real_B)))
        g_loss = torch.mean((1 - disc_B(fake_B)) ** 2) + torch.mean((1 - disc_A(fake_A)) ** 2) + \
            cycle_lambda * cycle_loss + identity_lambda * identity_loss
        g_opt.zero_grad()
        d_opt.zero_grad()
        g_loss.backward()
        g_opt.step()

        d_loss_A = (torch.mean((1 - disc_A(real_A)) ** 2) + torch.mean(disc_A(gen_B2A(real_B)) ** 2)) / 2.0
        d_loss_B = (torch.mean((1 - disc_B(real_B)) ** 2) + torch.mean(disc_B(gen_A2B(real_A)) ** 2)) / 2.0
        d_loss = (d_loss_A + d_loss_B) / 2.0
        g_opt.zero_grad()
        d_opt.zero_grad()
        d_loss.backward()
        d_opt.step()

        logger.log_iter(loss_dict={'g_loss': g_loss, 'd_loss': d_loss})  # expect: TML001
        logger.end_iter()
    logger.end_epoch()
