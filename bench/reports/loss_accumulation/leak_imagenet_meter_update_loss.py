# Source: https://github.com/pytorch/pytorch/issues/6925
# Report: after porting the ImageNet example to 0.4 and replacing loss.data[0] with plain loss, `losses.update(loss, input.size(0))` on the example's AverageMeter made training run out of CUDA memory; losses.update(loss.item(), ...) did not.
# Shape: the loss tensor is handed to a meter created before the loop whose update() keeps it in self.val and folds it into self.sum/self.avg, so the graph of every batch stays reachable from the meter.
# Expect: TML001 line 53
import time

import torch


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


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / batch_size) for k in topk]


def train(train_loader, model, criterion, optimizer, epoch, print_freq=10):
    batch_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()

    model.train()
    end = time.time()
    for i, (input, target) in enumerate(train_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        output = model(input)
        loss = criterion(output, target)

        prec1, = accuracy(output, target, topk=(1,))
        losses.update(loss, input.size(0))  # expect: TML001
        top1.update(prec1[0], input.size(0))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(time.time() - end)
        end = time.time()
        if i % print_freq == 0:
            print("Epoch: [{0}][{1}/{2}]\tLoss {loss.avg:.4f}\tPrec@1 {top1.avg:.3f}".format(
                epoch, i, len(train_loader), loss=losses, top1=top1))
    return losses.avg
