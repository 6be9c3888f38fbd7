# Source: https://github.com/facebookresearch/SLIP/pull/8
# Report: the pre-training loop fed every entry of the criterion's loss dict into an AverageMeter as a tensor, so the meters accumulated tensors (and their autograd history) instead of numbers; fixed by passing loss_dict[k].item()
# Shape: a dict of AverageMeters built once per epoch; update() receives the graph-attached loss tensors and adds them into self.sum
# Expect: TML001 line 22
import math
import sys
import time
from collections import OrderedDict

import torch
from torch.cuda import amp


class AverageMeter:
    def __init__(self, name, fmt=":f"):
        self.name, self.fmt = name, fmt
        self.val = self.avg = self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n  # expect: TML001
        self.count += n
        self.avg = self.sum / self.count


def train(loader, model, criterion, optimizer, scaler, lr_schedule, epoch, args):
    batch_time = AverageMeter("Time", ":6.2f")
    metric_names = ["loss", "clip_loss", "ssl_loss", "clip_acc", "ssl_acc"]
    metrics = OrderedDict((name, AverageMeter(name, ":.2e")) for name in metric_names)
    iters_per_epoch = len(loader) // args.update_freq
    model.train()
    end = time.time()
    for data_iter, inputs in enumerate(loader):
        optim_iter = data_iter // args.update_freq
        it = iters_per_epoch * epoch + optim_iter
        for group in optimizer.param_groups:
            group["lr"] = lr_schedule[it]
        inputs = [t.cuda(args.gpu, non_blocking=True) for t in inputs]

        with amp.autocast(enabled=not args.disable_amp):
            outputs = model(*inputs)
            loss_dict = criterion(outputs)
            loss = loss_dict["loss"]
            loss /= args.update_freq

        if not math.isfinite(loss.item()):
            print("Loss is {}, stopping training".format(loss.item()))
            sys.exit(1)

        scaler.scale(loss).backward()
        if (data_iter + 1) % args.update_freq != 0:
            continue
        scaler.step(optimizer)
        scaler.update()
        model.zero_grad(set_to_none=True)

        for k in loss_dict:
            metrics[k].update(loss_dict[k], args.batch_size)

        batch_time.update(time.time() - end)
        end = time.time()
    return {k: v.avg for k, v in metrics.items()}
