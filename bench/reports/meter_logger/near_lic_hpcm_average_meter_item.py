# Source: https://github.com/lyq133/LIC-HPCM/issues/4
# Report: train_one_epoch creates AverageMeter objects outside the loop and calls loss.update(out_criterion["loss"]) with graph-carrying tensors, so per-step VRAM is not released and training crashes deep into the epoch.
# Shape: fixed variant (the repo's "Fix AverageMeter" commit): the call sites still pass tensors, but AverageMeter.update converts them with val.detach().item() before accumulating, so the meter only holds Python floats.
# Expect: near-miss: must be silent
import time

import torch


class AverageMeter:
    """Compute running average."""

    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        # Get a Python float so no graph is kept
        if isinstance(val, torch.Tensor):
            val = val.detach().item()
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_one_epoch(model, criterion, train_dataloader, optimizer, epoch, clip_max_norm=1.0):
    model.train()
    device = next(model.parameters()).device
    loss = AverageMeter()
    bpp_loss = AverageMeter()
    mse_loss = AverageMeter()

    t_start = time.time()
    for i, d in enumerate(train_dataloader):
        d = d.to(device)
        optimizer.zero_grad()
        out_net = model(d)
        out_criterion = criterion(out_net, d)
        out_criterion["loss"].backward()
        if clip_max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_max_norm)
        optimizer.step()

        bpp_loss.update(out_criterion["bpp_loss"])
        mse_loss.update(out_criterion["mse_loss"])
        loss.update(out_criterion["loss"])

        if i % 100 == 0:
            print(f"Train epoch {epoch}: [{i}/{len(train_dataloader)}] "
                  f"Loss: {loss.avg:.4f} | MSE: {mse_loss.avg:.6f} | "
                  f"Bpp: {bpp_loss.avg:.4f} | {time.time() - t_start:.2f}s")
            t_start = time.time()
