# Source: https://github.com/jiangzhengkai/ProCA/blob/fd7bc41f7eb51ffd32e568b9b8f343e378647aaa/train_proca.py
# Report: audit of ProCA's prototype-contrast training: train() hands feat_estimator.update() tgt_feat.detach() / src_feat.detach(), and the estimator's running-mean branch rebinds self.Proto with a trailing .detach(), so the prototypes carry no graph from step to step
# Shape: same PrototypeEstimator.update() helper called twice per step; the self.Proto rebind still reads its previous value, but both its input and its result are detached
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrototypeEstimator:
    def __init__(self, num_classes, feat_dim, ignore_label=255, device="cuda"):
        self.num_classes = num_classes
        self.ignore_label = ignore_label
        self.Proto = torch.zeros(num_classes, feat_dim, device=device)
        self.Amount = torch.zeros(num_classes, device=device)

    def update(self, features, labels):
        keep = labels != self.ignore_label
        features, labels = features[keep], labels[keep]
        onehot = F.one_hot(labels, self.num_classes).float()          # N x C
        counts = onehot.sum(0)                                         # C
        class_sum = onehot.t() @ features                              # C x A
        mean = class_sum / counts.clamp(min=1).unsqueeze(1)
        weight = (counts / (counts + self.Amount).clamp(min=1)).unsqueeze(1)
        self.Proto = (self.Proto * (1 - weight) + mean * weight).detach()
        self.Amount = self.Amount + counts


def proto_contrast(proto, feats, labels, tau=0.1, ignore_label=255):
    keep = labels != ignore_label
    logits = F.normalize(feats[keep], dim=1) @ F.normalize(proto, dim=1).t() / tau
    return F.cross_entropy(logits, labels[keep])


def flatten(feat):
    b, a, h, w = feat.shape
    return feat.permute(0, 2, 3, 1).reshape(b * h * w, a)


def down_mask(label, size):
    return F.interpolate(label.unsqueeze(1).float(), size=size, mode="nearest").long().view(-1)


def train(backbone, head, src_loader, tgt_loader, num_classes, feat_dim, max_iter, logger, lambda_feat=1.0):
    opt = torch.optim.SGD(list(backbone.parameters()) + list(head.parameters()), lr=2.5e-4, momentum=0.9)
    estimator = PrototypeEstimator(num_classes, feat_dim)
    ce = nn.CrossEntropyLoss(ignore_index=255)
    backbone.train(); head.train()
    for it, ((src_x, src_y), (tgt_x, _)) in enumerate(zip(src_loader, tgt_loader)):
        src_x, src_y, tgt_x = src_x.cuda(), src_y.cuda().long(), tgt_x.cuda()
        opt.zero_grad()
        src_feat, tgt_feat = backbone(src_x), backbone(tgt_x)
        src_out, tgt_out = head(src_feat), head(tgt_feat)
        loss_sup = ce(F.interpolate(src_out, size=src_y.shape[-2:], mode="bilinear", align_corners=True), src_y)

        src_mask = down_mask(src_y, src_feat.shape[-2:])
        conf, tgt_mask = tgt_out.detach().softmax(1).max(1)
        tgt_mask[conf < 0.9] = 255
        tgt_mask = tgt_mask.view(-1)
        src_flat, tgt_flat = flatten(src_feat), flatten(tgt_feat)

        estimator.update(tgt_flat.detach(), tgt_mask)
        estimator.update(src_flat.detach(), src_mask)

        proto = estimator.Proto.detach()
        loss_feat = proto_contrast(proto, src_flat, src_mask) + proto_contrast(proto, tgt_flat, tgt_mask)
        loss = loss_sup + lambda_feat * loss_feat
        loss.backward()
        opt.step()
        if it % 20 == 0:
            logger.info(f"iter {it} sup {loss_sup.item():.3f} feat {loss_feat.item():.3f}")
        if it + 1 == max_iter:
            break
    return estimator
