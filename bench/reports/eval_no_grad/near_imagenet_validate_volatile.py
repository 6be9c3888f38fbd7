# Source: https://github.com/pytorch/pytorch/issues/4668
# Report: training ImageNet, GPU memory went up after the first validation pass and stayed there; the validation code still relied on the removed volatile flag, and switching to torch.no_grad fixed it
# Shape: same validate(), with the volatile flag replaced by the @torch.no_grad() decorator, so val batches keep no activations (the fix given in the report)
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1, 5)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand(pred.t().shape))
    return [correct[:k].reshape(-1).float().sum().item() * 100.0 / target.size(0) for k in topk]


@torch.no_grad()
def validate(val_loader, model, criterion, device="cuda", print_freq=50):
    batch_time = AverageMeter("Time")
    losses = AverageMeter("Loss")
    top1 = AverageMeter("Acc@1")
    top5 = AverageMeter("Acc@5")
    model.eval()
    end = time.time()
    for i, (images, target) in enumerate(val_loader):
        # was Variable(images, volatile=True); the decorator does that job now
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        acc1, acc5 = accuracy(output, target)
        losses.update(loss.item(), images.size(0))
        top1.update(acc1, images.size(0))
        top5.update(acc5, images.size(0))
        batch_time.update(time.time() - end)
        end = time.time()
        if i % print_freq == 0:
            print(f"Test [{i}/{len(val_loader)}] loss {losses.avg:.4f} acc@1 {top1.avg:.2f} acc@5 {top5.avg:.2f}")
    print(f" * Acc@1 {top1.avg:.3f} Acc@5 {top5.avg:.3f}")
    return top1.avg


def run(model, train_one_epoch, train_loader, val_loader, epochs=90, device="cuda"):
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    best = 0.0
    for epoch in range(epochs):
        train_one_epoch(train_loader, model, criterion, optimizer, epoch)
        best = max(best, validate(val_loader, model, criterion, device))
    return best
