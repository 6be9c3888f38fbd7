# Source: https://github.com/HobbitLong/SupContrast/blob/master/main_supcon.py
# Report: SupContrast's one-epoch train() with the AverageMeter fed the loss tensor itself (losses.update(loss, bsz)) instead of loss.item()
# Shape: AverageMeter.update stores val on self and does self.sum += val * n, so the meter (alive for the whole epoch) chains every step's graph-attached loss; avg and val are tensors too
# Expect: TML001 line 69
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self):
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


class SupConLoss(nn.Module):
    def __init__(self, temperature=0.07):
        super().__init__()
        self.temperature = temperature

    def forward(self, features, labels=None):
        bsz, n_views = features.shape[:2]
        feats = torch.cat(torch.unbind(features, dim=1), dim=0)
        logits = feats @ feats.T / self.temperature
        self_mask = torch.eye(bsz * n_views, device=feats.device, dtype=torch.bool)
        logits = logits.masked_fill(self_mask, float("-inf"))
        if labels is None:
            labels = torch.arange(bsz, device=feats.device)
        labels = labels.repeat(n_views)
        pos = (labels[:, None] == labels[None, :]) & ~self_mask
        log_prob = F.log_softmax(logits, dim=1).masked_fill(~pos, 0.0)
        return -(log_prob.sum(1) / pos.sum(1)).mean()


def train(train_loader, model, criterion, optimizer, epoch, opt):
    """one epoch training"""
    model.train()
    batch_time = AverageMeter()
    losses = AverageMeter()

    end = time.time()
    for idx, (images, labels) in enumerate(train_loader):
        images = torch.cat([images[0], images[1]], dim=0).cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        bsz = labels.shape[0]

        features = model(images)
        f1, f2 = torch.split(features, [bsz, bsz], dim=0)
        features = torch.cat([f1.unsqueeze(1), f2.unsqueeze(1)], dim=1)
        loss = criterion(features, labels) if opt.method == "SupCon" else criterion(features)

        # update metric
        losses.update(loss, bsz)  # expect: TML001

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(time.time() - end)
        end = time.time()
        if (idx + 1) % opt.print_freq == 0:
            print("Train: [{0}][{1}/{2}]\tBT {bt.val:.3f} ({bt.avg:.3f})\tloss {loss.val:.3f} ({loss.avg:.3f})".format(
                epoch, idx + 1, len(train_loader), bt=batch_time, loss=losses))
            sys.stdout.flush()
    return losses.avg
