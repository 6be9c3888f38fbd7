# Source: https://github.com/zhanglichao/updatenet/blob/bb205054c59aca02faa355d0cb5322c54b75b7eb/templates_generate/train_updateNet.py
# Report: UpdateNet (learned template update for Siamese trackers) is trained once per learning-rate pair of a sweep; each epoch feeds an AverageMeter with the batch loss; here it is handed `loss.cpu()` (the `.data.numpy().tolist()` dropped)
# Shape: loss.cpu() is a copy that still carries the autograd history; AverageMeter.update stores it in self.val and chains it into self.sum, so the meter pins every batch's graph node for the epoch
# Expect: TML001 line 66
import numpy as np
import torch
import torch.nn as nn


class UpdateResNet(nn.Module):
    def __init__(self, ch=512):
        super().__init__()
        self.update = nn.Sequential(nn.Conv2d(3 * ch, 96, 1), nn.ReLU(inplace=True), nn.Conv2d(96, ch, 1))

    def forward(self, x, x0):
        return self.update(x) + x0


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


def adjust_learning_rate(optimizer, epoch, lr0, epochs):
    lr = np.logspace(-lr0[0], -lr0[1], num=epochs)[epoch]
    for group in optimizer.param_groups:
        group['lr'] = lr


def sweep(args, data, lrs):
    for ii in range(lrs.shape[0]):
        model = UpdateResNet().cuda()
        criterion = nn.MSELoss(reduction='sum').cuda()
        optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=args.momentum,
                                    weight_decay=args.weight_decay)
        for epoch in range(args.epochs):
            adjust_learning_rate(optimizer, epoch, lrs[ii], args.epochs)
            losses = AverageMeter()
            subset = np.random.permutation(data['train'])
            for t in range(0, len(subset), args.batch_size):
                batch = subset[t:t + args.batch_size]
                init = data['template0'][batch - data['init0'][batch]]
                pre = data['template'][batch - data['pre'][batch]]
                cur = data['templatei'][batch]
                gt = data['template0'][batch + data['gt'][batch] - 1]
                input_up = torch.Tensor(np.concatenate((init, pre, cur), axis=1)).cuda()
                init_inp = torch.Tensor(init).cuda()
                target = torch.Tensor(gt).cuda()

                output = model(input_up, init_inp)
                loss = criterion(output, target) / target.size(0)
                losses.update(loss.cpu())  # expect: TML001

                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if t % args.print_freq == 0:
                    print('Epoch: [{0}][{1}/{2}]\tLoss {loss.val:.4f} ({loss.avg:.4f})'.format(
                        str(epoch).zfill(2), str(t).zfill(5), len(subset), loss=losses))
            torch.save({'state_dict': model.state_dict()}, 'checkpoint_lr{}_{}.pth'.format(ii, epoch))
