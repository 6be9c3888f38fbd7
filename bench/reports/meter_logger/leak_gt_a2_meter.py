# Source: https://github.com/Gabgros/convnet/blob/main/part2-pytorch/main.py
# Report: a student's CS7643 assignment-2 solution fills the training-loop TODO and then feeds the raw loss tensor to the template's AverageMeter (losses.update(loss, n)) instead of loss.item().
# Shape: AverageMeter.update does self.sum += val * n on a meter created before the batch loop, so every batch's attached training loss is chained into losses.sum for the whole epoch (validate's no_grad loss is a detached scalar re-summed in place of the old sum: not labelled).
# Expect: TML001 line 54
import time
import torch
import torch.nn as nn


class AverageMeter(object):
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


def accuracy(output, target):
    batch_size = target.shape[0]
    _, pred = torch.max(output, dim=-1)
    correct = pred.eq(target).sum() * 1.0
    return (correct / batch_size).item()


def train(epoch, data_loader, model, optimizer, criterion):
    iter_time = AverageMeter()
    losses = AverageMeter()
    acc = AverageMeter()
    for idx, (data, target) in enumerate(data_loader):
        start = time.time()
        if torch.cuda.is_available():
            data = data.cuda()
            target = target.cuda()

        out = model(data)
        loss = criterion(out, target)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_acc = accuracy(out, target)
        losses.update(loss, out.shape[0])  # expect: TML001
        acc.update(batch_acc, out.shape[0])

        iter_time.update(time.time() - start)
        if idx % 10 == 0:
            print(('Epoch: [{0}][{1}/{2}]\t'
                   'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                   'Prec @1 {top1.val:.4f} ({top1.avg:.4f})\t')
                  .format(epoch, idx, len(data_loader), loss=losses, top1=acc))


def validate(epoch, val_loader, model, criterion):
    losses = AverageMeter()
    acc = AverageMeter()
    for idx, (data, target) in enumerate(val_loader):
        if torch.cuda.is_available():
            data = data.cuda()
            target = target.cuda()
        with torch.no_grad():
            out = model(data)
            loss = criterion(out, target)

        batch_acc = accuracy(out, target)
        losses.update(loss, out.shape[0])
        acc.update(batch_acc, out.shape[0])
    print("* Prec @1: {top1.avg:.4f}".format(top1=acc))
    return acc.avg


def main(model, train_loader, test_loader, epochs=10, lr=0.1):
    if torch.cuda.is_available():
        model = model.cuda()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr, momentum=0.9, weight_decay=5e-4)
    best = 0.0
    for epoch in range(epochs):
        train(epoch, train_loader, model, optimizer, criterion)
        acc = validate(epoch, test_loader, model, criterion)
        best = max(best, acc)
    print('Best Prec @1 Acccuracy: {:.4f}'.format(best))
