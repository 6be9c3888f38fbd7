# Source: https://github.com/ZJULiHongxin/HRNet-Hand-Pose-Estimation/blob/9ce02e7161051e7a25573a7791117e1e6b92abd3/lib/core/function.py
# Report: audit of the hand-pose trainer: its AverageMeter computes every loss term, sums heatmap_loss.item() etc. into self and returns the graph-attached terms for backward (correct real code)
# Shape: same recorder; the running sums on self take .item() of each term and of the weighted total, while the returned dict keeps the attached tensors only for this step's backward
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn


class LossRecorder:
    """Computes the configured loss terms and keeps running sums for logging."""

    def __init__(self, criterion, factors):
        self.criterion = criterion          # {"heatmap_loss": fn, "pose2d_loss": fn}
        self.factors = factors              # {"heatmap_loss": 1.0, "pose2d_loss": 0.1}
        self.sums = {name: 0.0 for name in criterion}
        self.sums["total_loss"] = 0.0
        self.n = 0

    def compute_losses(self, heatmaps_pred, heatmaps_gt, pose2d_pred, pose2d_gt):
        self.n += 1
        inputs = {
            "heatmap_loss": (heatmaps_pred, heatmaps_gt),
            "pose2d_loss": (pose2d_pred[..., :2], pose2d_gt[..., :2]),
        }
        loss_dict = {}
        total = 0.0
        for name, fn in self.criterion.items():
            term = fn(*inputs[name])
            self.sums[name] += term.item()
            total = total + self.factors[name] * term
            loss_dict[name] = term
        self.sums["total_loss"] += total.item()
        loss_dict["total_loss"] = total
        return loss_dict

    def averages(self):
        return {name: value / max(self.n, 1) for name, value in self.sums.items()}


def soft_argmax_2d(heatmaps):
    b, j, h, w = heatmaps.shape
    probs = heatmaps.flatten(2).softmax(dim=-1).view(b, j, h, w)
    xs = torch.arange(w, device=heatmaps.device, dtype=heatmaps.dtype)
    ys = torch.arange(h, device=heatmaps.device, dtype=heatmaps.dtype)
    return torch.stack([(probs.sum(2) * xs).sum(-1), (probs.sum(3) * ys).sum(-1)], dim=-1)


def train_epoch(model, loader, optimizer, epoch, logger, device="cuda", print_freq=50):
    criterion = {"heatmap_loss": nn.MSELoss(), "pose2d_loss": nn.SmoothL1Loss()}
    recorder = LossRecorder(criterion, {"heatmap_loss": 1.0, "pose2d_loss": 0.1})
    model.train()
    end = time.time()
    for i, batch in enumerate(loader):
        imgs = batch["imgs"].to(device, non_blocking=True)
        heatmaps_gt = batch["heatmaps"].to(device, non_blocking=True)
        pose2d_gt = batch["pose2d"].to(device, non_blocking=True)

        heatmaps_pred = model(imgs)
        pose2d_pred = soft_argmax_2d(heatmaps_pred)
        loss_dict = recorder.compute_losses(heatmaps_pred, heatmaps_gt, pose2d_pred, pose2d_gt)

        optimizer.zero_grad()
        loss_dict["total_loss"].backward()
        optimizer.step()

        if i % print_freq == 0:
            avg = recorder.averages()
            logger.info("Epoch [%d][%d/%d] %.2fs total %.5f (%.5f)", epoch, i, len(loader),
                        time.time() - end, loss_dict["total_loss"].item(), avg["total_loss"])
            end = time.time()
    return recorder.averages()
