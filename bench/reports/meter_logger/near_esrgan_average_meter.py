# Source: https://github.com/Lornatang/ESRGAN-PyTorch/blob/04485e090f7d3a409ad10a9812c86401629e2d3e/train_esrgan.py
# Report: audited code as shipped: train() passes pixel_loss.item(), content_loss.item(), adversarial_loss.item() and psnr.item() to AverageMeter.update
# Shape: the same per-epoch AverageMeter objects accumulate self.sum += val * n, but only Python floats reach them
# Expect: near-miss: must be silent

import time

import torch
from torch.cuda import amp

import config


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(discriminator, generator, train_prefetcher, psnr_criterion, pixel_criterion,
          content_criterion, adversarial_criterion, d_optimizer, g_optimizer, epoch, scaler, writer):
    batches = len(train_prefetcher)
    pixel_losses = AverageMeter("Pixel loss", ":6.6f")
    content_losses = AverageMeter("Content loss", ":6.6f")
    adversarial_losses = AverageMeter("Adversarial loss", ":6.6f")
    psnres = AverageMeter("PSNR", ":4.2f")

    discriminator.train()
    generator.train()
    batch_index = 0
    end = time.time()
    train_prefetcher.reset()
    batch_data = train_prefetcher.next()
    while batch_data is not None:
        lr = batch_data["lr"].to(config.device, non_blocking=True)
        hr = batch_data["hr"].to(config.device, non_blocking=True)
        real_label = torch.full([lr.size(0), 1], 1.0, dtype=lr.dtype, device=config.device)
        fake_label = torch.full([lr.size(0), 1], 0.0, dtype=lr.dtype, device=config.device)

        discriminator.zero_grad()
        with amp.autocast():
            sr = generator(lr)
            hr_output = discriminator(hr)
            sr_output = discriminator(sr.detach())
            d_loss = adversarial_criterion(hr_output - torch.mean(sr_output), real_label) * 0.5 \
                + adversarial_criterion(sr_output - torch.mean(hr_output), fake_label) * 0.5
        scaler.scale(d_loss).backward()
        scaler.step(d_optimizer)
        scaler.update()

        generator.zero_grad()
        with amp.autocast():
            hr_output = discriminator(hr.detach())
            sr_output = discriminator(sr)
            pixel_loss = config.pixel_weight * pixel_criterion(sr, hr.detach())
            content_loss = config.content_weight * content_criterion(sr, hr.detach())
            adversarial_loss = config.adversarial_weight * adversarial_criterion(sr_output - torch.mean(hr_output), real_label)
            g_loss = pixel_loss + content_loss + adversarial_loss
        scaler.scale(g_loss).backward()
        scaler.step(g_optimizer)
        scaler.update()

        psnr = 10. * torch.log10(1. / psnr_criterion(sr, hr))
        pixel_losses.update(pixel_loss.item(), lr.size(0))
        content_losses.update(content_loss.item(), lr.size(0))
        adversarial_losses.update(adversarial_loss.item(), lr.size(0))
        psnres.update(psnr.item(), lr.size(0))

        if batch_index % config.print_frequency == 0:
            iters = batch_index + epoch * batches + 1
            writer.add_scalar("Train/D_Loss", d_loss.item(), iters)
            writer.add_scalar("Train/G_Loss", g_loss.item(), iters)
            print(f"Epoch: [{epoch + 1}][{batch_index}/{batches}] time {time.time() - end:.3f}")

        end = time.time()
        batch_data = train_prefetcher.next()
        batch_index += 1
