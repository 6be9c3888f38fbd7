# Source: https://github.com/kenshohara/3D-ResNets-PyTorch/issues/72
# Report: ResNeXt-101 clips train fine but hit CUDA OOM in validation and test on torch 0.4; the val_epoch of that time relied on Variable(volatile=True), which 0.4 ignores (source note: validation.py at 4f4a7af17070c424b626bd18989a05b8bbd09126)
# Shape: the fix from the 0.4 migration: the whole clip loop of val_epoch runs under torch.no_grad(); meters still get .item() floats
# Expect: near-miss: must be silent
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


def calculate_accuracy(outputs, targets):
    batch_size = targets.size(0)
    _, pred = outputs.topk(1, 1, True)
    pred = pred.t()
    correct = pred.eq(targets.view(1, -1))
    return correct.float().sum().item() / batch_size


def val_epoch(epoch, data_loader, model, criterion, opt, logger):
    print('validation at epoch {}'.format(epoch))
    model.eval()
    losses = AverageMeter()
    accuracies = AverageMeter()
    end_time = time.time()
    with torch.no_grad():
        for i, (inputs, targets) in enumerate(data_loader):
            if not opt.no_cuda:
                inputs = inputs.cuda(non_blocking=True)
                targets = targets.cuda(non_blocking=True)
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            acc = calculate_accuracy(outputs, targets)

            losses.update(loss.item(), inputs.size(0))
            accuracies.update(acc, inputs.size(0))
            print('Epoch: [{0}][{1}/{2}]\t'
                  'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                  'Acc {acc.val:.3f} ({acc.avg:.3f})\t'
                  'Time {t:.3f}'.format(epoch, i + 1, len(data_loader),
                                       loss=losses, acc=accuracies,
                                       t=time.time() - end_time))
            end_time = time.time()

    logger.log({'epoch': epoch, 'loss': losses.avg, 'acc': accuracies.avg})
    return losses.avg
