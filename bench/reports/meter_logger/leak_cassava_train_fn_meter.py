# Source: https://github.com/VpkPrasanna/cassava-leaf-disease-classification/blob/69529dc87b91d1c1d1920725f437b7a7bdcea2f7/cassava/train.py
# Report: Kaggle Cassava leaf disease pipeline one edit away: train_fn hands the loss tensor itself to the AverageMeter (the print format still works on a 0-dim tensor)
# Shape: AverageMeter.update stores self.val = loss and self.sum += loss * n on a meter that lives all epoch: sum becomes a tensor chained to every step's loss node (and val pins the last graph)
# Expect: TML001 line 62
import time

import numpy as np
import torch


class CFG:
    grad_accum_steps = 2
    max_grad_norm = 1000
    print_freq = 100


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


def cutmix(data, target, lam):
    indices = torch.randperm(data.size(0), device=data.device)
    h, w = data.size(2), data.size(3)
    ch, cw = int(h * (1 - lam) ** 0.5), int(w * (1 - lam) ** 0.5)
    mixed = data.clone()
    mixed[:, :, :ch, :cw] = data[indices, :, :ch, :cw]
    return mixed, (target, target[indices], 1 - ch * cw / (h * w))


def train_fn(train_loader, model, criterion, optimizer, epoch, device):
    losses = AverageMeter()
    model.train()
    start = time.time()
    for step, (images, labels) in enumerate(train_loader):
        images = images.to(device).float()
        labels = labels.to(device).long()
        batch_size = labels.size(0)
        mixed = np.random.rand() < 0.25
        if mixed:
            images, labels = cutmix(images, labels, np.random.uniform(0.3, 0.4))

        y_preds = model(images)
        if mixed:
            loss = criterion(y_preds, labels[0]) * labels[2] + criterion(y_preds, labels[1]) * (1.0 - labels[2])
        else:
            loss = criterion(y_preds, labels)
        losses.update(loss, batch_size)  # expect: TML001
        if CFG.grad_accum_steps > 1:
            loss = loss / CFG.grad_accum_steps
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CFG.max_grad_norm)
        if (step + 1) % CFG.grad_accum_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
        if step % CFG.print_freq == 0 or step == len(train_loader) - 1:
            print(f"Epoch [{epoch + 1}][{step}/{len(train_loader)}] "
                  f"Loss {losses.val:.4f} ({losses.avg:.4f}) Grad {grad_norm:.4f} "
                  f"{time.time() - start:.0f}s")
    return losses.avg


def valid_fn(valid_loader, model, criterion, device):
    losses = AverageMeter()
    model.eval()
    preds = []
    for images, labels in valid_loader:
        images, labels = images.to(device), labels.to(device)
        with torch.no_grad():
            y_preds = model(images)
        loss = criterion(y_preds, labels)
        losses.update(loss.item(), labels.size(0))
        preds.append(y_preds.softmax(1).to("cpu").numpy())
    return losses.avg, np.concatenate(preds)
