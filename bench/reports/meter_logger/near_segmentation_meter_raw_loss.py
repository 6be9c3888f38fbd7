# Source: https://github.com/tsubasa-mizuno/2023_05_cityscapes/blob/440897ffad200dfceb7120c51ff7074d3e5242bf/train.py
# Report: audit of a Cityscapes segmentation trainer whose train() passes the raw loss tensor to AverageMeter.update(loss, image.size(0)); the repo's meter itself turns any tensor into a float with .item() before summing, so nothing graph-attached is kept (correct in a tricky way)
# Shape: same AverageMeter and tqdm loop, train_loss.update(loss, ...) still receives the tensor, but update() does `if isinstance(val, torch.Tensor): val = val.item()` before self.sum += val * n
# Expect: near-miss: must be silent
import numpy as np
import torch
from tqdm import tqdm


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        if isinstance(val, torch.Tensor):
            val = val.item()
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(model, criterion, optimizer, loader, epoch, experiment, evaluator):
    evaluator.reset()
    model.train()
    train_loss = AverageMeter()
    with tqdm(loader, leave=False) as pbar:
        pbar.set_description("[train]")
        for step, sample in enumerate(pbar):
            image = sample["image"].cuda()
            labels = sample["labels"].cuda().squeeze(dim=1)
            logits = model(image)
            loss = criterion(logits, labels.long())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_loss.update(loss, image.size(0))
            pbar.set_postfix(loss=f"{loss.item():.4f}")
            pred = logits.argmax(dim=1).detach().cpu().numpy()
            evaluator.add_batch(labels.cpu().numpy(), pred)
    experiment.log_metric("train_epoch_loss", float(train_loss.avg), step=epoch)
    return train_loss


def validate(model, criterion, loader, epoch, experiment, evaluator):
    model.eval()
    evaluator.reset()
    val_loss = AverageMeter()
    for sample in loader:
        image = sample["image"].cuda()
        labels = sample["labels"].cuda().squeeze(dim=1)
        with torch.no_grad():
            logits = model(image)
        loss = criterion(logits, labels.long())
        val_loss.update(loss.item(), image.size(0))
        evaluator.add_batch(labels.cpu().numpy(), logits.argmax(dim=1).cpu().numpy())
    experiment.log_metric("val_epoch_loss", val_loss.avg, step=epoch)
    experiment.log_metric("val_mIoU", float(np.nanmean(evaluator.iou())), step=epoch)
    return val_loss.avg
