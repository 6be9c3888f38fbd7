# Source: https://github.com/chenyuntc/simple-faster-rcnn-pytorch/blob/HEAD/trainer.py
# Report: audit of the Faster R-CNN trainer: update_meters() feeds the four RPN/RoI losses and their total into torchnet AverageValueMeters; the repository converts each with at.scalar() first, this variant hands the loss tensors over directly
# Shape: LossTuple of graph-attached losses passed to a same-module meter whose add() does self.sum += value; the meters live on the trainer for the whole epoch
# Expect: TML001 line 66
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

LossTuple = namedtuple("LossTuple", ["rpn_loc_loss", "rpn_cls_loss", "roi_loc_loss", "roi_cls_loss", "total_loss"])


class AverageValueMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.n, self.sum = 0, 0.0

    def add(self, value, n=1):
        self.sum += value
        self.n += n

    def value(self):
        return self.sum / max(self.n, 1), self.n


def smooth_l1_loss(pred, target, in_weight, sigma):
    diff = in_weight * (pred - target)
    abs_diff = diff.abs()
    flag = (abs_diff.detach() < 1.0 / sigma ** 2).float()
    y = flag * (sigma ** 2 / 2.0) * diff ** 2 + (1 - flag) * (abs_diff - 0.5 / sigma ** 2)
    return y.sum() / max(float((in_weight > 0).sum()), 1.0)


class FasterRCNNTrainer(nn.Module):
    def __init__(self, faster_rcnn, lr=1e-3, rpn_sigma=3.0, roi_sigma=1.0):
        super().__init__()
        self.faster_rcnn = faster_rcnn
        self.rpn_sigma, self.roi_sigma = rpn_sigma, roi_sigma
        self.optimizer = torch.optim.SGD(faster_rcnn.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
        self.meters = {k: AverageValueMeter() for k in LossTuple._fields}

    def forward(self, imgs, bboxes, labels, scale):
        features = self.faster_rcnn.extractor(imgs)
        rpn_loc, rpn_score, gt_rpn_loc, gt_rpn_label = self.faster_rcnn.rpn(features, bboxes, scale)
        roi_loc, roi_score, gt_roi_loc, gt_roi_label = self.faster_rcnn.head(features, bboxes, labels)
        rpn_loc_loss = smooth_l1_loss(rpn_loc, gt_rpn_loc, (gt_rpn_label > 0).float()[:, None], self.rpn_sigma)
        rpn_cls_loss = F.cross_entropy(rpn_score, gt_rpn_label, ignore_index=-1)
        roi_loc_loss = smooth_l1_loss(roi_loc, gt_roi_loc, (gt_roi_label > 0).float()[:, None], self.roi_sigma)
        roi_cls_loss = nn.CrossEntropyLoss()(roi_score, gt_roi_label)
        losses = [rpn_loc_loss, rpn_cls_loss, roi_loc_loss, roi_cls_loss]
        return LossTuple(*losses, sum(losses))

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses.total_loss.backward()
        self.optimizer.step()
        self.update_meters(losses)
        return losses

    def update_meters(self, losses):
        for key, meter in self.meters.items():
            meter.add(getattr(losses, key))  # expect: TML001

    def get_meter_data(self):
        return {k: float(m.value()[0]) for k, m in self.meters.items()}


def train(trainer, loader, epochs=14, plot_every=40):
    for epoch in range(epochs):
        for meter in trainer.meters.values():
            meter.reset()
        for ii, (img, bbox, label, scale) in enumerate(loader):
            img, bbox, label = img.cuda().float(), bbox.cuda(), label.cuda()
            trainer.train_step(img, bbox, label, float(scale))
            if (ii + 1) % plot_every == 0:
                print(epoch, ii + 1, trainer.get_meter_data())
