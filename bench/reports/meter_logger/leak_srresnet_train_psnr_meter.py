# Source: https://github.com/Lornatang/SRGAN-PyTorch/issues/55
# Report: "why when i want to calculate psnr during training i get this error": train_srresnet.py's train(model, train_prefetcher, pixel_criterion, optimizer, epoch, scaler, writer, psnr_model, ssim_model) ran out of CUDA memory inside scaler.scale(loss).backward() once PSNR was measured on the training batches
# Shape: kept: the user's exact edit was not posted; this rewrite follows the repo's train() and AverageMeter, with the PSNR of the graph-attached SR batch handed to psnres.update() as a tensor, so AverageMeter.sum (self.sum += val * n) chains every batch's generator graph for the whole epoch
# Expect: TML001 line 73
import time

import torch
from torch import nn
from torch.cuda import amp

import srresnet_config as config


class AverageMeter(object):
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

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


class PSNR(nn.Module):
    def __init__(self, crop_border=0):
        super().__init__()
        self.crop_border = crop_border

    def forward(self, raw_tensor, dst_tensor):
        mse = torch.mean((raw_tensor - dst_tensor) ** 2, dim=[1, 2, 3])
        return 10. * torch.log10(1. / (mse + 1e-8))


def train(model, train_prefetcher, pixel_criterion, optimizer, epoch, scaler, writer, psnr_model):
    batches = len(train_prefetcher)
    data_time = AverageMeter("Data", ":6.3f")
    losses = AverageMeter("Loss", ":6.6f")
    psnres = AverageMeter("PSNR", ":4.2f")

    model.train()
    train_prefetcher.reset()
    batch_data = train_prefetcher.next()
    batch_index = 0
    end = time.time()
    while batch_data is not None:
        data_time.update(time.time() - end)
        lr = batch_data["lr"].to(config.device, non_blocking=True)
        hr = batch_data["hr"].to(config.device, non_blocking=True)

        model.zero_grad(set_to_none=True)
        with amp.autocast():
            sr = model(lr)
            loss = torch.mul(config.loss_weights, pixel_criterion(sr, hr))
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        psnr = psnr_model(sr, hr).mean()
        losses.update(loss.item(), lr.size(0))
        psnres.update(psnr, lr.size(0))  # expect: TML001

        if batch_index % config.print_frequency == 0:
            writer.add_scalar("Train/Loss", loss.item(), batch_index + epoch * batches + 1)
            print(f"Epoch [{epoch + 1}][{batch_index}/{batches}] {losses} {psnres}")

        batch_data = train_prefetcher.next()
        batch_index += 1
        end = time.time()

    return losses.avg, float(psnres.avg)
