# Source: https://github.com/modelscope/3D-Speaker/blob/5ebadc3c275898be2f02f02a6e34d01445e0f9ec/speakerlab/bin/train.py
# Report: audited code; removed the `.item()` from `train_stats.update('Loss', loss.item(), x.size(0))` in speakerlab/bin/train.py (AverageMeters from speakerlab/utils/utils.py)
# Shape: the CE/AAM loss tensor goes through AverageMeters.update -> AverageMeter.update, which keeps it as self.val and folds it into self.sum for the whole epoch
# Expect: TML001 line 84

import time

import torch
import torch.nn as nn


class AverageMeter(object):
    def __init__(self, name, fmt=':f'):
        self.name = name
        self.fmt = fmt
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


class AverageMeters(object):
    def __init__(self):
        self.cont = dict()

    def add(self, name, fmt=':f'):
        self.cont[name] = AverageMeter(name, fmt)

    def update(self, name, val, n=1):
        self.cont[name].update(val, n)

    def avg(self, name):
        return self.cont[name].avg

    def val(self, name):
        return self.cont[name].val


def accuracy(x, target):
    _, pred = x.topk(1)
    pred = pred.squeeze(-1)
    return pred.eq(target).float().mean() * 100


def train(train_loader, model, criterion, optimizer, epoch, lr_scheduler,
          margin_scheduler, logger, config, rank):
    train_stats = AverageMeters()
    train_stats.add('Time', ':6.3f')
    train_stats.add('Data', ':6.3f')
    train_stats.add('Loss', ':.4e')
    train_stats.add('Acc@1', ':6.2f')
    train_stats.add('Lr', ':.3e')
    train_stats.add('Margin', ':.3f')

    model.train()
    end = time.time()
    for i, (x, y) in enumerate(train_loader):
        train_stats.update('Data', time.time() - end)

        iter_num = (epoch - 1) * len(train_loader) + i
        lr_scheduler.step(iter_num)
        margin_scheduler.step(iter_num)

        x = x.cuda(non_blocking=True)
        y = y.cuda(non_blocking=True)

        output = model(x)
        loss = criterion(output, y)
        acc1 = accuracy(output, y)

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        train_stats.update('Loss', loss, x.size(0))  # expect: TML001
        train_stats.update('Acc@1', acc1.item(), x.size(0))
        train_stats.update('Lr', optimizer.param_groups[0]["lr"])
        train_stats.update('Margin', margin_scheduler.get_margin())
        train_stats.update('Time', time.time() - end)

        if rank == 0 and i % config.log_batch_freq == 0:
            logger.info("Epoch: [%d][%d/%d] Loss %.4e" % (
                epoch, i, len(train_loader), float(train_stats.val('Loss'))))
        end = time.time()

    return {
        'Avg_loss': train_stats.avg('Loss'),
        'Avg_acc': train_stats.avg('Acc@1'),
        'Lr_value': train_stats.val('Lr'),
    }


def run_epochs(model, classifier, train_dataloader, train_sampler, criterion, optimizer,
               lr_scheduler, margin_scheduler, epoch_counter, epoch_logger, logger, config, rank):
    model = nn.Sequential(model, classifier).cuda()
    for epoch in epoch_counter:
        train_sampler.set_epoch(epoch)
        train_stats = train(train_dataloader, model, criterion, optimizer, epoch,
                            lr_scheduler, margin_scheduler, logger, config, rank)
        if rank == 0:
            epoch_logger.log_stats(stats_meta={"epoch": epoch}, stats=train_stats)
