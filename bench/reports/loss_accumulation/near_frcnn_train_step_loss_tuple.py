# Source: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/27
# Report: fixed version of the faster-rcnn-pytorch RAM leak: the epoch loop converts each returned loss with .item() before adding it to the running totals
# Shape: same train_step returning the five-loss list and the same tuple unpacking, but every running += takes .item()
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import nn


class FasterRCNNTrainer(nn.Module):
    def __init__(self, faster_rcnn, optimizer):
        super().__init__()
        self.faster_rcnn = faster_rcnn
        self.optimizer = optimizer

    def forward(self, imgs, bboxes, labels, scale):
        rpn_locs, rpn_scores, roi_locs, roi_scores, targets = self.faster_rcnn(imgs, bboxes, labels, scale)
        rpn_loc_loss = F.smooth_l1_loss(rpn_locs, targets["rpn_loc"])
        rpn_cls_loss = F.cross_entropy(rpn_scores, targets["rpn_label"], ignore_index=-1)
        roi_loc_loss = F.smooth_l1_loss(roi_locs, targets["roi_loc"])
        roi_cls_loss = F.cross_entropy(roi_scores, targets["roi_label"])
        losses = [rpn_loc_loss, rpn_cls_loss, roi_loc_loss, roi_cls_loss]
        losses = losses + [sum(losses)]
        return losses

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses[-1].backward()
        self.optimizer.step()
        return losses


def fit_one_epoch(net, optimizer, epoch, epoch_size, gen, cuda=True):
    train_util = FasterRCNNTrainer(net, optimizer)
    total_loss = 0
    rpn_loc_loss = 0
    rpn_cls_loss = 0
    roi_loc_loss = 0
    roi_cls_loss = 0
    for iteration, (imgs, boxes, labels) in enumerate(gen):
        if iteration >= epoch_size:
            break
        with torch.no_grad():
            imgs = torch.from_numpy(imgs).float()
            imgs = imgs.cuda() if cuda else imgs
        losses = train_util.train_step(imgs, boxes, labels, 1)
        rpn_loc, rpn_cls, roi_loc, roi_cls, total = losses
        total_loss += total.item()
        rpn_loc_loss += rpn_loc.item()
        rpn_cls_loss += rpn_cls.item()
        roi_loc_loss += roi_loc.item()
        roi_cls_loss += roi_cls.item()
        print(f"Epoch {epoch + 1} iter {iteration}/{epoch_size} total {float(total_loss) / (iteration + 1):.4f} "
              f"rpn_loc {float(rpn_loc_loss) / (iteration + 1):.4f} roi_cls {float(roi_cls_loss) / (iteration + 1):.4f}")
    return float(total_loss) / max(epoch_size, 1)
