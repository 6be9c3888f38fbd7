# Source: https://github.com/quark0/darts/blob/4bfe43246bf7f32ff7e84044d3d0435074087d06/cnn/train_search.py
# Report: DARTS search runs out of memory on the validation pass; PyTorch warns "volatile was removed and now has no effect. Use `with torch.no_grad():` instead" for infer() (source note: report: https://github.com/quark0/darts/issues/16)
# Shape: infer() still wraps inputs in Variable(volatile=True), which is a no-op since 0.4: the supernet forward over the valid queue saves all mixed-op activations
# Expect: TML003 line 46
import logging

import torch
import torch.nn as nn
from torch.autograd import Variable


class AvgrageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.avg = 0
        self.sum = 0
        self.cnt = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.cnt += n
        self.avg = self.sum / self.cnt


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    return [correct[:k].reshape(-1).float().sum(0).mul_(100.0 / batch_size) for k in topk]


def infer(valid_queue, model, criterion, report_freq=50):
    objs = AvgrageMeter()
    top1 = AvgrageMeter()
    top5 = AvgrageMeter()
    model.eval()

    for step, (input, target) in enumerate(valid_queue):
        input = Variable(input, volatile=True).cuda()
        target = Variable(target, volatile=True).cuda(non_blocking=True)

        logits = model(input)  # expect: TML003
        loss = criterion(logits, target)

        prec1, prec5 = accuracy(logits, target, topk=(1, 5))
        n = input.size(0)
        objs.update(loss.item(), n)
        top1.update(prec1.item(), n)
        top5.update(prec5.item(), n)

        if step % report_freq == 0:
            logging.info('valid %03d %e %f %f', step, objs.avg, top1.avg, top5.avg)

    return top1.avg, objs.avg


def run_search_epoch(model, valid_queue):
    criterion = nn.CrossEntropyLoss().cuda()
    valid_acc, valid_obj = infer(valid_queue, model, criterion)
    logging.info('valid_acc %f', valid_acc)
    return valid_acc
