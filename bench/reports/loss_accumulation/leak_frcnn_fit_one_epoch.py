# Source: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/35
# Report: fit_one_epoch summed the five Faster R-CNN loss tensors with `+=` instead of `+= x.item()`, so memory kept rising during training
# Shape: a trainer helper backprops and returns the list of loss tensors; the epoch loop unpacks them and adds each into an epoch-level running sum
# Expect: TML001 line 53; TML001 line 54; TML001 line 55; TML001 line 56; TML001 line 57
import torch
import torch.nn.functional as F
from tqdm import tqdm


class FasterRCNNTrainer(torch.nn.Module):
    def __init__(self, model_train, optimizer):
        super().__init__()
        self.model_train = model_train
        self.optimizer = optimizer

    def forward(self, imgs, bboxes, labels, scale):
        base_feature = self.model_train(imgs, mode="extractor")
        rpn_locs, rpn_scores, gt_rpn_loc, gt_rpn_label = self.model_train([base_feature, bboxes], mode="rpn")
        roi_cls_locs, roi_scores, gt_roi_loc, gt_roi_label = self.model_train([base_feature, labels], mode="head")
        rpn_loc = F.smooth_l1_loss(rpn_locs, gt_rpn_loc)
        rpn_cls = F.cross_entropy(rpn_scores, gt_rpn_label, ignore_index=-1)
        roi_loc = F.smooth_l1_loss(roi_cls_locs, gt_roi_loc)
        roi_cls = F.cross_entropy(roi_scores, gt_roi_label)
        losses = [rpn_loc, rpn_cls, roi_loc, roi_cls]
        losses = losses + [sum(losses)]
        return losses

    def train_step(self, imgs, bboxes, labels, scale):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, bboxes, labels, scale)
        losses[-1].backward()
        self.optimizer.step()
        return losses


def fit_one_epoch(model_train, train_util, epoch, epoch_step, gen, Epoch, cuda):
    total_loss = 0
    rpn_loc_loss = 0
    rpn_cls_loss = 0
    roi_loc_loss = 0
    roi_cls_loss = 0

    model_train.train()
    with tqdm(total=epoch_step, desc=f"Epoch {epoch + 1}/{Epoch}", mininterval=0.3) as pbar:
        for iteration, batch in enumerate(gen):
            if iteration >= epoch_step:
                break
            images, boxes, labels = batch[0], batch[1], batch[2]
            if cuda:
                images = images.cuda()

            rpn_loc, rpn_cls, roi_loc, roi_cls, total = train_util.train_step(images, boxes, labels, 1)
            total_loss += total  # expect: TML001
            rpn_loc_loss += rpn_loc  # expect: TML001
            rpn_cls_loss += rpn_cls  # expect: TML001
            roi_loc_loss += roi_loc  # expect: TML001
            roi_cls_loss += roi_cls  # expect: TML001

            pbar.set_postfix(**{
                "total_loss": float(total_loss) / (iteration + 1),
                "rpn_loc": float(rpn_loc_loss) / (iteration + 1),
                "rpn_cls": float(rpn_cls_loss) / (iteration + 1),
                "roi_loc": float(roi_loc_loss) / (iteration + 1),
                "roi_cls": float(roi_cls_loss) / (iteration + 1),
            })
            pbar.update(1)

    return float(total_loss) / epoch_step
