# Source: https://github.com/BIT-DA/SDCA/issues/4
# Report: SDCA keeps per-class feature Mean/CoVariance in a semantic_dist_estimator updated every iteration; the thread asks why the estimates are detached. This variant keeps them differentiable (no detach at the call site, none in update())
# Shape: train() hands the graph-attached feature map to feat_estimator.update(); update() rebuilds self.Mean / self.CoVariance from their previous values and the new features, so each iteration's feature-extractor graph is chained onto every earlier one
# Expect: TML005 lines 45, 46
import torch
import torch.nn as nn
import torch.nn.functional as F


class semantic_dist_estimator:
    def __init__(self, feature_num, class_num, ignore_label=255):
        self.class_num = class_num
        self.ignore_label = ignore_label
        self.CoVariance = torch.zeros(class_num, feature_num).cuda(non_blocking=True)
        self.Mean = torch.zeros(class_num, feature_num).cuda(non_blocking=True)
        self.Amount = torch.zeros(class_num).cuda(non_blocking=True)

    def update(self, features, labels):
        mask = labels != self.ignore_label
        labels = labels[mask]
        features = features[mask]

        N, A = features.size()
        C = self.class_num
        NxCxA_features = features.view(N, 1, A).expand(N, C, A)

        onehot = torch.zeros(N, C).cuda()
        onehot.scatter_(1, labels.view(-1, 1), 1)
        NxCxA_onehot = onehot.view(N, C, 1).expand(N, C, A)

        features_by_sort = NxCxA_features.mul(NxCxA_onehot)
        amount_CxA = NxCxA_onehot.sum(0)
        amount_CxA[amount_CxA == 0] = 1

        mean_CxA = features_by_sort.sum(0) / amount_CxA
        var_temp = features_by_sort - mean_CxA.expand(N, C, A).mul(NxCxA_onehot)
        var_temp = var_temp.pow(2).sum(0).div(amount_CxA)

        sum_weight_CV = onehot.sum(0).view(C, 1).expand(C, A)
        weight_CV = sum_weight_CV.div(sum_weight_CV + self.Amount.view(C, 1).expand(C, A))
        weight_CV[weight_CV != weight_CV] = 0
        additional_CV = weight_CV.mul(1 - weight_CV).mul((self.Mean - mean_CxA).pow(2))

        # keep the statistics differentiable w.r.t. the current features
        self.CoVariance = self.CoVariance.mul(1 - weight_CV) + var_temp.mul(weight_CV) + additional_CV  # expect: TML005
        self.Mean = self.Mean.mul(1 - weight_CV) + mean_CxA.mul(weight_CV)  # expect: TML005
        self.Amount = self.Amount + onehot.sum(0)


def train(feature_extractor, classifier, src_loader, tgt_loader, pcl_criterion, optimizer_fea, optimizer_cls, cfg):
    ce_criterion = nn.CrossEntropyLoss(ignore_index=255)
    feat_estimator = semantic_dist_estimator(feature_num=2048, class_num=cfg.num_classes)
    feature_extractor.train()
    classifier.train()

    for (src_input, src_label), (tgt_input, _) in zip(src_loader, tgt_loader):
        optimizer_fea.zero_grad()
        optimizer_cls.zero_grad()
        src_input = src_input.cuda(non_blocking=True)
        src_label = src_label.cuda(non_blocking=True).long()
        tgt_input = tgt_input.cuda(non_blocking=True)

        src_feat = feature_extractor(src_input)
        src_out = classifier(src_feat)
        tgt_feat = feature_extractor(tgt_input)

        src_pred = F.interpolate(src_out, size=src_input.shape[-2:], mode="bilinear", align_corners=True)
        loss_sup = ce_criterion(src_pred, src_label)

        B, A, Hs, Ws = src_feat.size()
        src_mask = F.interpolate(src_label.unsqueeze(0).float(), size=(Hs, Ws), mode="nearest").squeeze(0).long()
        src_mask = src_mask.contiguous().view(B * Hs * Ws)

        src_feat = src_feat.permute(0, 2, 3, 1).contiguous().view(B * Hs * Ws, A)
        tgt_feat = tgt_feat.permute(0, 2, 3, 1).contiguous().view(-1, A)
        feat_estimator.update(features=src_feat, labels=src_mask)

        loss_feat = pcl_criterion(Mean=feat_estimator.Mean.detach(), CoVariance=feat_estimator.CoVariance.detach(),
                                  feat=src_feat, labels=src_mask)
        loss = loss_sup + cfg.lambda_feat * loss_feat
        loss.backward()
        optimizer_fea.step()
        optimizer_cls.step()
