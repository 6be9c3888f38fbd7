# Source: https://github.com/chufengt/ALM-pedestrian-attribute/issues/36
# Report: GPU memory leak in main.py: validate() and test() call output = model(input) without torch.no_grad(); adding "with torch.no_grad():" ahead fixed it
# Shape: same validate/test helpers, loops wrapped in `with torch.no_grad():` as in the fix; meter still gets loss.data and test still uses .data.cpu()
# Expect: near-miss: must be silent
import time

import numpy as np
import torch


class AverageMeter:
    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def vote(output):
    if isinstance(output, (tuple, list)):
        output = torch.max(torch.max(torch.max(output[0], output[1]), output[2]), output[3])
    return output


def validate(val_loader, model, criterion, accuracy, epoch):
    losses, top1, batch_time = AverageMeter(), AverageMeter(), AverageMeter()
    model.eval()
    end = time.time()
    with torch.no_grad():
        for i, (inp, target) in enumerate(val_loader):
            target = target.cuda(non_blocking=True)
            inp = inp.cuda(non_blocking=True)
            output = model(inp)
            bs = target.size(0)
            if isinstance(output, (tuple, list)):
                loss_list = [criterion.forward(torch.sigmoid(out), target, epoch) for out in output]
                loss = sum(loss_list)
            else:
                loss = criterion.forward(torch.sigmoid(output), target, epoch)
            output = vote(output)
            losses.update(loss.data, bs)
            top1.update(accuracy(output.data, target), bs)
            batch_time.update(time.time() - end)
            end = time.time()
    print(f" * Accu {top1.avg:.3f}  Loss {float(losses.avg):.4f}")
    return top1.avg


def test(val_loader, model, attr_num):
    model.eval()
    pos_cnt, pos_tol = np.zeros(attr_num), np.zeros(attr_num)
    neg_cnt, neg_tol = np.zeros(attr_num), np.zeros(attr_num)
    with torch.no_grad():
        for i, (inp, target) in enumerate(val_loader):
            inp = inp.cuda(non_blocking=True)
            output = vote(model(inp))
            pred = np.where(torch.sigmoid(output.data).cpu().numpy() > 0.5, 1, 0)
            tgt = target.numpy()
            pos_tol += (tgt == 1).sum(0)
            neg_tol += (tgt == 0).sum(0)
            pos_cnt += ((tgt == 1) & (pred == 1)).sum(0)
            neg_cnt += ((tgt == 0) & (pred == 0)).sum(0)
    m_a = ((pos_cnt / np.maximum(pos_tol, 1)) + (neg_cnt / np.maximum(neg_tol, 1))) / 2.0
    print("mA:", m_a.mean())
    return m_a
