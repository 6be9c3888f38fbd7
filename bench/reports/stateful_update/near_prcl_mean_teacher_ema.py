# Source: https://github.com/Haoyu-Xie/PRCL/blob/44b8ad8fbd1d7dcbbee252bd0ad784a8681a8cdb/generalframeworks/networks/ddp_model.py
# Report: audited mean-teacher EMA of PRCL (semi-supervised semantic segmentation, DeepLabv3+): Model_with_un.ema_update runs after every optimizer step and blends the student's parameters into the frozen teacher; the repository does it on .data so no history is recorded
# Shape: the repository's own ema_update: the teacher parameter is rebound through .data from the student's .data, so the blend is computed outside autograd (no history, nothing chained) even though no no_grad context is used
# Expect: near-miss: must be silent
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from generalframeworks.networks.deeplabv3.deeplabv3 import DeepLabv3Plus_with_un
from generalframeworks.networks.uncer_head import Uncertainty_head


class Model_with_un(nn.Module):
    def __init__(self, base_encoder, num_classes=21, output_dim=256, ema_alpha=0.99, config=None):
        super().__init__()
        self.model = DeepLabv3Plus_with_un(base_encoder, num_classes=num_classes, output_dim=output_dim)
        self.step = 0
        self.ema_model = copy.deepcopy(self.model)
        for p in self.ema_model.parameters():
            p.requires_grad = False
        self.alpha = ema_alpha
        self.uncer_head = Uncertainty_head()
        self.config = config

    def ema_update(self):
        decay = min(1 - 1 / (self.step + 1), self.alpha)
        for ema_param, param in zip(self.ema_model.parameters(), self.model.parameters()):
            ema_param.data = decay * ema_param.data + (1 - decay) * param.data
        self.step += 1

    def forward(self, train_l_image, train_u_image):
        with torch.no_grad():
            pred_u, _, _ = self.ema_model(train_u_image)
            pred_u_large_raw = F.interpolate(pred_u, size=train_u_image.shape[2:], mode="bilinear", align_corners=True)
            pseudo_logits, pseudo_labels = torch.max(torch.softmax(pred_u_large_raw, dim=1), dim=1)
        pred_l, rep_l, raw_feat_l = self.model(train_l_image)
        pred_l_large = F.interpolate(pred_l, size=train_l_image.shape[2:], mode="bilinear", align_corners=True)
        pred_u, rep_u, raw_feat_u = self.model(train_u_image)
        pred_u_large = F.interpolate(pred_u, size=train_l_image.shape[2:], mode="bilinear", align_corners=True)
        uncer_all = self.uncer_head(torch.cat((raw_feat_l, raw_feat_u), dim=0))
        return pred_l_large, pred_u_large, pseudo_labels, pseudo_logits, uncer_all


def train(train_l_loader, train_u_loader, model, optimizer, criterion, sup_meter, unsup_meter, local_rank):
    model.module.model.train()
    model.module.ema_model.train()
    training_u_iter = iter(train_u_loader)
    for train_l_image, train_l_label in train_l_loader:
        train_l_image, train_l_label = train_l_image.cuda(local_rank), train_l_label.cuda(local_rank)
        train_u_image, _ = next(training_u_iter)
        train_u_image = train_u_image.cuda(local_rank)
        pred_l_large, pred_u_large, u_label, u_logits, _ = model(train_l_image, train_u_image)

        sup_loss = criterion["ce_loss"](pred_l_large, train_l_label)
        unsup_loss = criterion["unsup_loss"](pred_u_large, u_label, u_logits)
        total_loss = sup_loss + unsup_loss
        sup_meter.update(sup_loss.item(), train_l_image.shape[0])
        unsup_meter.update(unsup_loss.item(), train_u_image.shape[0])

        optimizer.zero_grad()
        total_loss.backward()
        optimizer.step()
        model.module.ema_update()
