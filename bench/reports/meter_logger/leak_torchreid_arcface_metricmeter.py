# Source: https://github.com/BratchikovD/duke_practice/blob/060d790fa7b99c14476cafb1aad7b318384a1926/engines/arcface.py
# Report: torchreid-style ArcFace engine returns the graph-attached loss in loss_summary; this MetricMeter (a common copy of Dassl's) lacks the isinstance/.item() conversion
# Shape: loss_summary['loss'] goes through MetricMeter.update into AverageMeter.update, whose self.sum += val * n chains every step's loss graph for the whole epoch
# Expect: TML001 line 72
import math
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter(object):
    def __init__(self):
        self.val, self.sum, self.count, self.avg = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class MetricMeter(object):
    def __init__(self, delimiter='\t'):
        self.meters = defaultdict(AverageMeter)
        self.delimiter = delimiter

    def update(self, input_dict):
        if input_dict is None:
            return
        for k, v in input_dict.items():
            self.meters[k].update(v)

    def __str__(self):
        return self.delimiter.join('{} {:.4f} ({:.4f})'.format(k, m.val, m.avg) for k, m in self.meters.items())


class ArcFaceLoss(nn.Module):
    def __init__(self, in_features, out_features, margin=0.5, s=64):
        super().__init__()
        self.s = s
        self.margin = margin
        self.cosine_threshold = math.cos(math.pi - margin)
        self.modified_margin = math.sin(math.pi - margin) * margin
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, inputs, targets):
        cosine = F.linear(F.normalize(inputs), F.normalize(self.weight))
        sin_theta = torch.sqrt((1.0 - cosine.pow(2)).clamp(min=1e-7))
        phi = cosine * math.cos(self.margin) - sin_theta * math.sin(self.margin)
        phi = torch.where(cosine > self.cosine_threshold, phi, cosine - self.modified_margin)
        one_hot = torch.zeros_like(cosine).scatter_(1, targets.view(-1, 1), 1)
        logits = self.s * (one_hot * phi + (1.0 - one_hot) * cosine)
        return F.cross_entropy(logits, targets)


class Engine(object):
    def __init__(self, train_loader, print_freq=20):
        self.train_loader = train_loader
        self.print_freq = print_freq

    def forward_backward(self, data):
        raise NotImplementedError

    def train(self, epoch):
        losses = MetricMeter()
        self.model.train()
        for self.batch_idx, data in enumerate(self.train_loader):
            loss_summary = self.forward_backward(data)
            losses.update(loss_summary)  # expect: TML001
            if (self.batch_idx + 1) % self.print_freq == 0:
                print('epoch {} [{}] {}'.format(epoch, self.batch_idx + 1, losses))
        if self.scheduler is not None:
            self.scheduler.step()


class ImageArcFaceEngine(Engine):
    def __init__(self, train_loader, num_pids, model, optimizer, margin=0.5, scheduler=None):
        super().__init__(train_loader)
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.criterion = ArcFaceLoss(2048, num_pids, margin).cuda()

    def forward_backward(self, data):
        imgs, pids = data['img'].cuda(), data['pid'].cuda()
        outputs, features = self.model(imgs)
        loss_summary = {}
        loss = self.criterion(features, pids)
        loss_summary['loss'] = loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss_summary
