# Source: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/27
# Report: after unfreezing the backbone the training process was killed for running out of RAM: fit_one_epoch summed the loss tensors returned by train_step into running totals without converting them (fix: += float(loss) / .item())
# Shape: FasterRCNNTrainer.train_step returns the list [rpn_loc, rpn_cls, roi_loc, roi_cls, total]; the epoch loop tuple-unpacks it and does five running += on the attached tensors
# Expect: TML001 line 49; TML001 line 50; TML001 line 51; TML001 line 52; TML001 line 53
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
        total_loss += total  # expect: TML001
        rpn_loc_loss += rpn_loc  # expect: TML001
        rpn_cls_loss += rpn_cls  # expect: TML001
        roi_loc_loss += roi_loc  # expect: TML001
        roi_cls_loss += roi_cls  # expect: TML001
        print(f"Epoch {epoch + 1} iter {iteration}/{epoch_size} total {float(total_loss) / (iteration + 1):.4f} "
              f"rpn_loc {float(rpn_loc_loss) / (iteration + 1):.4f} roi_cls {float(roi_cls_loss) / (iteration + 1):.4f}")
    return float(total_loss) / max(epoch_size, 1)
