# Source: https://github.com/McGregorWwww/UCTransNet/blob/4cf4b3c8230fb1c3b977406be32c78b2a9066306/Train_one_epoch.py
# Report: UCTransNet (medical image segmentation) train_one_epoch sums len(images) * out_loss and the hard dice from criterion._show_dice into epoch totals; issue #2 reports CUDA OOM a few hundred iterations into epoch 1.
# Shape: out_loss (criterion output) and train_dice (1 - dice_loss(preds, ...), computed after backward, never backwarded) are kept in loss_sum / dice_sum / dices for the whole epoch, each pinning its graph and the dice graph's saved B x H x W tensors.
# Expect: TML001 lines 74, 77, 79
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightedDiceLoss(nn.Module):
    def __init__(self, weights=(0.5, 0.5)):
        super().__init__()
        self.weights = weights

    def forward(self, logit, truth, smooth=1e-5):
        bs = len(logit)
        p = logit.view(bs, -1)
        t = truth.view(bs, -1)
        w = t.detach() * (self.weights[1] - self.weights[0]) + self.weights[0]
        p, t = w * p, w * t
        inter = (p * t).sum(-1)
        union = (p * p).sum(-1) + (t * t).sum(-1)
        return (1 - (2 * inter + smooth) / (union + smooth)).mean()


class DiceBCE(nn.Module):
    def __init__(self, dice_weight=0.5, bce_weight=0.5):
        super().__init__()
        self.dice_loss = WeightedDiceLoss()
        self.dice_weight = dice_weight
        self.bce_weight = bce_weight

    def show_dice(self, inputs, targets):
        inputs[inputs >= 0.5] = 1
        inputs[inputs < 0.5] = 0
        targets[targets > 0] = 1
        return 1.0 - self.dice_loss(inputs, targets)

    def forward(self, inputs, targets):
        dice = self.dice_loss(inputs, targets)
        bce = F.binary_cross_entropy(inputs, targets)
        return self.dice_weight * dice + self.bce_weight * bce


def iou_on_batch(masks, preds):
    p = (preds.detach().cpu() >= 0.5).float()
    m = (masks.detach().cpu() > 0).float()
    inter = (p * m).sum().item()
    return inter / max((p + m).clamp(max=1).sum().item(), 1.0)


def run_epoch(loader, model, criterion, optimizer, epoch, batch_size, logger):
    mode = "Train" if model.training else "Val"
    end = time.time()
    time_sum, loss_sum = 0, 0
    dice_sum, iou_sum = 0.0, 0.0
    dices = []
    for i, batch in enumerate(loader, 1):
        images, masks = batch["image"].cuda(), batch["label"].cuda()

        preds = model(images)
        out_loss = criterion(preds, masks.float())

        if model.training:
            optimizer.zero_grad()
            out_loss.backward()
            optimizer.step()

        train_iou = iou_on_batch(masks, preds)
        train_dice = criterion.show_dice(preds, masks.float())
        batch_time = time.time() - end
        dices.append(train_dice)  # expect: TML001

        time_sum += len(images) * batch_time
        loss_sum += len(images) * out_loss  # expect: TML001
        iou_sum += len(images) * train_iou
        dice_sum += len(images) * train_dice  # expect: TML001

        seen = batch_size * (i - 1) + len(images)
        average_loss = loss_sum / seen
        avg_dice = dice_sum / seen
        end = time.time()
        if i % 10 == 0:
            logger.info(f"[{mode}] {epoch}:{i} loss {out_loss.item():.3f} (avg {float(average_loss):.4f}) "
                        f"dice {float(train_dice):.4f} (avg {float(avg_dice):.4f}) iou {iou_sum / seen:.3f}")
    return average_loss, avg_dice


def main_loop(model, train_loader, val_loader, epochs, batch_size, logger):
    model = model.cuda()
    criterion = DiceBCE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = 0.0
    for epoch in range(epochs):
        model.train(True)
        run_epoch(train_loader, model, criterion, optimizer, epoch, batch_size, logger)
        with torch.no_grad():
            model.eval()
            val_loss, val_dice = run_epoch(val_loader, model, criterion, optimizer, epoch, batch_size, logger)
        if val_dice > best:
            best = val_dice
            torch.save({"epoch": epoch, "state_dict": model.state_dict()}, "best_model.pth.tar")
    return model
