# Source: https://github.com/UCSD-E4E/acoustic-multiclass-training/blob/main/classification/train.py
# Report: bird-call classifier: valid() runs run_batch() under no_grad and keeps every batch's outputs for a macro mAP; the real code copies them with .cpu().detach(), this variant drops the .cpu() because the concatenation is sent back to the GPU afterwards anyway
# Shape: run_batch() returns model(mels) computed on the GPU; under no_grad the outputs are not attached, but log_pred (bound before the loop) collects one device tensor per validation batch, so the whole validation set's logits stay on the GPU
# Expect: TML004 line 76
import logging

import numpy as np
import torch
import torch.nn.functional as F
from torch.amp import autocast
from torchmetrics.classification import MultilabelAveragePrecision

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
logger = logging.getLogger("bird_training")


def run_batch(model, mels, labels, mixed_precision=True):
    """Send a batch through the model, return (loss, outputs)."""
    mels = mels.to(DEVICE)
    labels = labels.to(DEVICE)
    with autocast(device_type=DEVICE, dtype=torch.float16, enabled=mixed_precision):
        outputs = model(mels)
        loss = model.loss_fn(outputs, labels)
    return loss.to(dtype=torch.float32), outputs.to(dtype=torch.float32)


def map_metric(outputs, labels, num_classes):
    metric = MultilabelAveragePrecision(num_labels=num_classes, average="macro")
    score = metric(outputs.detach().cpu(), labels.detach().cpu().long()).item()
    return 0.0 if np.isnan(score) else score


def train_epoch(model, loader, valid_loader, optimizer, scheduler, cfg, epoch):
    model.train()
    scaler = torch.cuda.amp.GradScaler()
    log_n, log_loss, log_map = 0, 0.0, 0.0
    for i, (mels, labels) in enumerate(loader):
        optimizer.zero_grad()
        loss, outputs = run_batch(model, mels, labels, cfg.mixed_precision)
        if cfg.mixed_precision:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        if scheduler is not None:
            scheduler.step()

        log_map += map_metric(outputs, labels, model.num_classes)
        log_loss += loss.item()
        log_n += 1
        if i % cfg.logging_freq == 0:
            logger.info("epoch %d it %d loss %.4f mAP %.4f",
                        epoch, i, log_loss / log_n, log_map / log_n)
            log_n, log_loss, log_map = 0, 0.0, 0.0

        if i != 0 and i % cfg.valid_freq == 0:
            valid(model, valid_loader, cfg, epoch + i / len(loader))
            model.train()


def valid(model, loader, cfg, epoch_progress):
    model.eval()
    running_loss = 0.0
    log_pred, log_label = [], []
    ratio = 1.0 if float(epoch_progress).is_integer() else cfg.valid_dataset_ratio
    n_batches = int(len(loader) * ratio)

    with torch.no_grad():
        for index, (mels, labels) in enumerate(loader):
            if index > n_batches:
                break
            loss, outputs = run_batch(model, mels, labels, cfg.mixed_precision)
            running_loss += loss.item()
            log_pred.append(outputs.detach())  # expect: TML004
            log_label.append(labels.detach())

    probs = F.softmax(torch.cat(log_pred), dim=1).to(DEVICE)
    valid_map = map_metric(probs, torch.cat(log_label), model.num_classes)
    logger.info("valid loss %.4f mAP %.4f", running_loss / max(n_batches, 1), valid_map)
    return valid_map
