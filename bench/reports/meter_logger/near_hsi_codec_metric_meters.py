# Source: https://github.com/faadi809/HSI-compression-benchmark/blob/ff9dbbc7ab032e9ece14773798679ba1d7e8aaec/1dCAE-SSCNet-2dCAE-HyCoT/train.py
# Report: audit: the hyperspectral autoencoder's train_epoch feeds the backwarded loss and three metrics computed from the live reconstruction (MSE, PSNR, spectral angle, never backwarded) as tensors into CompressAI-style AverageMeters (sum += val * n, .avg.item() read at epoch end), so every batch's metric graphs, holding the full reconstruction, stay alive for the epoch
# Shape: same trainer, but AverageMeter.update() detaches the value before summing (as a sibling fork's meter does with val.data), so train_epoch may pass live tensors; averages are read with .item() at epoch end
# Expect: near-miss: must be silent
import math
import torch
import torch.nn.functional as F


class AverageMeter:
    """Running average of a metric over an epoch."""

    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        val = val.detach()  # the meter never keeps autograd history
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def psnr(x, x_hat, max_val=1.0):
    return 20 * math.log10(max_val) - 10 * torch.log10(F.mse_loss(x_hat, x))


def spectral_angle(x, x_hat):
    cos = (x * x_hat).sum(1) / torch.sqrt((x ** 2).sum(1) * (x_hat ** 2).sum(1))
    return torch.rad2deg(torch.acos(cos.clamp(-1.0, 1.0))).mean()


def train_epoch(model, criterion, loader, optimizer, epoch, clip_max_norm, writer):
    model.train()
    device = next(model.parameters()).device
    loss_meter = AverageMeter()
    mse_meter = AverageMeter()
    psnr_meter = AverageMeter()
    sa_meter = AverageMeter()
    for cube in loader:
        cube = cube.to(device)
        optimizer.zero_grad()
        rec = model(cube)
        loss = criterion(cube, rec)
        loss.backward()
        if clip_max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_max_norm)
        optimizer.step()
        mse = F.mse_loss(rec, cube)
        peak = psnr(cube, rec)
        angle = spectral_angle(cube, rec)
        loss_meter.update(loss)
        mse_meter.update(mse)
        psnr_meter.update(peak)
        sa_meter.update(angle)
    averages = {"loss": loss_meter.avg.item(), "mse": mse_meter.avg.item(),
                "psnr": psnr_meter.avg.item(), "sa": sa_meter.avg.item()}
    for name, value in averages.items():
        writer.add_scalar(f"train/{name}", value, epoch)
    return averages


def val_epoch(model, criterion, loader, epoch, writer):
    model.eval()
    device = next(model.parameters()).device
    meters = {k: AverageMeter() for k in ("loss", "mse", "psnr", "sa")}
    with torch.no_grad():
        for cube in loader:
            cube = cube.to(device)
            rec = model(cube)
            meters["loss"].update(criterion(cube, rec))
            meters["mse"].update(F.mse_loss(rec, cube))
            meters["psnr"].update(psnr(cube, rec))
            meters["sa"].update(spectral_angle(cube, rec))
    averages = {k: m.avg.item() for k, m in meters.items()}
    for name, value in averages.items():
        writer.add_scalar(f"val/{name}", value, epoch)
    return averages["loss"]


def fit(model, criterion, train_loader, val_loader, optimizer, writer, epochs=500, clip_max_norm=1.0):
    best = float("inf")
    for epoch in range(epochs):
        train_epoch(model, criterion, train_loader, optimizer, epoch, clip_max_norm, writer)
        val_loss = val_epoch(model, criterion, val_loader, epoch, writer)
        if val_loss < best:
            best = val_loss
            torch.save({"epoch": epoch, "state_dict": model.state_dict()}, "best.pth.tar")
    return best
