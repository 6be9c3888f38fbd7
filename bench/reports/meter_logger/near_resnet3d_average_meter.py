# Source: https://github.com/kenshohara/3D-ResNets-PyTorch/blob/3c02dd3110c2c5cacb7a9313830f59eb7b439f0c/training.py
# Report: audited correct idiom: the 3D-ResNets video action recognition train_epoch hands loss.item() to its AverageMeter, whose update() keeps a running sum for the whole epoch
# Shape: train_epoch as the repository writes it: losses.update(loss.item(), inputs.size(0)), so AverageMeter only ever sums Python floats
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
    with torch.no_grad():
        batch_size = targets.size(0)
        _, pred = outputs.topk(1, 1, largest=True, sorted=True)
        pred = pred.t()
        correct = pred.eq(targets.view(1, -1))
        n_correct_elems = correct.float().sum().item()
        return n_correct_elems / batch_size


def train_epoch(epoch, data_loader, model, criterion, optimizer, device,
                current_lr, epoch_logger, batch_logger, tb_writer=None):
    print('train at epoch {}'.format(epoch))
    model.train()

    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    accuracies = AverageMeter()

    end_time = time.time()
    for i, (inputs, targets) in enumerate(data_loader):
        data_time.update(time.time() - end_time)
        targets = targets.to(device, non_blocking=True)
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        acc = calculate_accuracy(outputs, targets)
        losses.update(loss.item(), inputs.size(0))
        accuracies.update(acc, inputs.size(0))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time.update(time.time() - end_time)
        end_time = time.time()
        if batch_logger is not None:
            batch_logger.log({
                'epoch': epoch,
                'batch': i + 1,
                'iter': (epoch - 1) * len(data_loader) + (i + 1),
                'loss': losses.val,
                'acc': accuracies.val,
                'lr': current_lr,
            })

    if epoch_logger is not None:
        epoch_logger.log({'epoch': epoch, 'loss': losses.avg,
                          'acc': accuracies.avg, 'lr': current_lr})
    if tb_writer is not None:
        tb_writer.add_scalar('train/loss', losses.avg, epoch)
        tb_writer.add_scalar('train/acc', accuracies.avg, epoch)
