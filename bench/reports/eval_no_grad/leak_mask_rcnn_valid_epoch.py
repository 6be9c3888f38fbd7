# Source: https://github.com/multimodallearning/pytorch-mask-rcnn/blob/809abba590db89779ac02c42286135f18ea08b53/model.py
# Report: issue #59 (https://github.com/multimodallearning/pytorch-mask-rcnn/issues/59, CUDA out of memory; answer: run inference under torch.no_grad()); audited valid_epoch wraps each validation batch in Variable(..., volatile=True), a silent no-op since PyTorch 0.4, so the validation forward and losses build a full autograd graph every step
# Shape: the near-miss wraps the same loop body in with torch.no_grad(); here the volatile flags remain the only 'guard', and the method is named valid_epoch and iterates the validation generator
# Expect: TML003 line 56
import torch
import torch.nn as nn
from torch.autograd import Variable


def compute_losses(rpn_match, rpn_bbox, rpn_class_logits, rpn_pred_bbox, target_class_ids,
                   mrcnn_class_logits, target_deltas, mrcnn_bbox, target_mask, mrcnn_mask):
    rpn_class_loss = nn.functional.cross_entropy(rpn_class_logits, rpn_match.long())
    rpn_bbox_loss = nn.functional.smooth_l1_loss(rpn_pred_bbox, rpn_bbox)
    mrcnn_class_loss = nn.functional.cross_entropy(mrcnn_class_logits, target_class_ids.long())
    mrcnn_bbox_loss = nn.functional.smooth_l1_loss(mrcnn_bbox, target_deltas)
    mrcnn_mask_loss = nn.functional.binary_cross_entropy(mrcnn_mask, target_mask)
    return rpn_class_loss, rpn_bbox_loss, mrcnn_class_loss, mrcnn_bbox_loss, mrcnn_mask_loss


class MaskRCNN(nn.Module):
    def __init__(self, config, backbone, heads):
        super().__init__()
        self.config = config
        self.backbone = backbone
        self.heads = heads

    def predict(self, input, mode):
        images, image_metas, gt_class_ids, gt_boxes, gt_masks = input
        feature_maps = self.backbone(images)
        return self.heads(feature_maps, image_metas, gt_class_ids, gt_boxes, gt_masks, mode)

    def valid_epoch(self, datagenerator, steps):
        step = 0
        loss_sum = 0
        loss_rpn_class_sum = 0
        loss_mrcnn_mask_sum = 0

        for inputs in datagenerator:
            images, image_metas, rpn_match, rpn_bbox = inputs[0], inputs[1], inputs[2], inputs[3]
            gt_class_ids, gt_boxes, gt_masks = inputs[4], inputs[5], inputs[6]
            image_metas = image_metas.numpy()

            # Wrap in variables
            images = Variable(images, volatile=True)
            rpn_match = Variable(rpn_match, volatile=True)
            rpn_bbox = Variable(rpn_bbox, volatile=True)
            gt_class_ids = Variable(gt_class_ids, volatile=True)
            gt_boxes = Variable(gt_boxes, volatile=True)
            gt_masks = Variable(gt_masks, volatile=True)

            if self.config.GPU_COUNT:
                images, rpn_match, rpn_bbox = images.cuda(), rpn_match.cuda(), rpn_bbox.cuda()
                gt_class_ids, gt_boxes, gt_masks = gt_class_ids.cuda(), gt_boxes.cuda(), gt_masks.cuda()

            # Run object detection
            outputs = self.predict([images, image_metas, gt_class_ids, gt_boxes, gt_masks], mode='training')  # expect: TML003
            (rpn_class_logits, rpn_pred_bbox, target_class_ids, mrcnn_class_logits,
             target_deltas, mrcnn_bbox, target_mask, mrcnn_mask) = outputs
            if not target_class_ids.size():
                continue

            rpn_class_loss, rpn_bbox_loss, mrcnn_class_loss, mrcnn_bbox_loss, mrcnn_mask_loss = compute_losses(
                rpn_match, rpn_bbox, rpn_class_logits, rpn_pred_bbox, target_class_ids,
                mrcnn_class_logits, target_deltas, mrcnn_bbox, target_mask, mrcnn_mask)
            loss = rpn_class_loss + rpn_bbox_loss + mrcnn_class_loss + mrcnn_bbox_loss + mrcnn_mask_loss

            # Statistics
            loss_sum += loss.item() / steps
            loss_rpn_class_sum += rpn_class_loss.item() / steps
            loss_mrcnn_mask_sum += mrcnn_mask_loss.item() / steps

            if step == steps - 1:
                break
            step += 1

        return loss_sum, loss_rpn_class_sum, loss_mrcnn_mask_sum
