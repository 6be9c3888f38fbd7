# Source: https://github.com/ljaljushkin/nncf_pytorch/blob/9f7c911180731cfc7fdb0bd815d1cbc17ca8d32f/nncf/torch/nas/bootstrapNAS/algo.py
# Report: NNCF BootstrapNAS progressive-shrinking fine-tuner, fixed: the subnet loss is reduced with .item() before it reaches the AverageMeter
# Shape: losses.update(loss.item(), n) keeps Python floats in the meter; the validation meter sums tensors only under torch.no_grad()
# Expect: near-miss: must be silent
import random

import torch
import torch.nn.functional as F


class AverageMeter:
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
        _, pred = output.topk(max(topk), 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum().item() * 100.0 / target.size(0) for k in topk]


class ShrinkingTrainer:
    def __init__(self, supernet, teacher, optimizer, criterion, train_loader, val_loader, cfg):
        self.net = supernet
        self.teacher = teacher
        self.optimizer = optimizer
        self.criterion = criterion
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.cfg = cfg

    def sample_active_subnet(self):
        for op in self.net.elastic_ops:
            op.set_active_kernel_size(random.choice(op.kernel_size_list))

    def train_one_epoch(self, epoch):
        self.net.cuda().train()
        losses, top1 = AverageMeter(), AverageMeter()
        for i, (images, labels) in enumerate(self.train_loader):
            images, labels = images.cuda(), labels.cuda()
            if self.cfg["kd_ratio"] > 0:
                self.teacher.eval()
                with torch.no_grad():
                    soft_logits = self.teacher(images).detach()
            self.net.zero_grad()
            for sub in range(self.cfg["dynamic_batch_size"]):
                random.seed(int("%d%.3d" % (epoch * len(self.train_loader) + i, sub)))
                self.sample_active_subnet()
                output = self.net(images)
                loss = self.criterion(output, labels)
                if self.cfg["kd_ratio"] > 0:
                    loss = loss + self.cfg["kd_ratio"] * F.mse_loss(output, soft_logits)
                acc1, = accuracy(output, labels)
                losses.update(loss.item(), images.size(0))
                top1.update(acc1, images.size(0))
                loss.backward()
            self.optimizer.step()
            if i % self.cfg["print_freq"] == 0:
                print(f"train [{i}/{len(self.train_loader)}] loss {losses.val:.4f} ({losses.avg:.4f}) acc {top1.avg:.2f}")
        return losses.avg, top1.avg

    def validate(self):
        self.net.cuda().eval()
        losses, top1 = AverageMeter(), AverageMeter()
        with torch.no_grad():
            for images, labels in self.val_loader:
                images, labels = images.cuda(), labels.cuda()
                output = self.net(images)
                losses.update(self.criterion(output, labels), images.size(0))
                acc1, = accuracy(output, labels)
                top1.update(acc1, images.size(0))
        return losses.avg.item(), top1.avg
