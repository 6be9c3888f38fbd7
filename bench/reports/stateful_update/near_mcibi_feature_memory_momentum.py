# Source: https://github.com/SegmentationBLWX/sssegmentation/blob/eb1878c112402e86a92ee6958778272065bf59b9/ssseg/modules/models/segmentors/mcibi/mcibi.py
# Report: MCIBI ("Mining Contextual Information Beyond Image") keeps a dataset-level class-feature memory on the segmentor and, in every training forward, moves each class's memory slot towards the batch's features with a momentum update; the repository runs that update inside `with torch.no_grad():` and through `.data`, because the features come from the bottleneck output of the current batch
# Shape: the repository's safeguard kept: the same per-step momentum update of the memory buffer, from the same bottleneck features, in the same forward, but wrapped in `with torch.no_grad():` as mcibi.py does around memory_module.update, so the stored memory carries no graph (the initialisation branch still .detach()es)
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..base import BaseSegmentor, SelfAttentionBlock


class MCIBI(BaseSegmentor):
    def __init__(self, cfg, mode):
        super(MCIBI, self).__init__(cfg, mode)
        head_cfg = cfg["head"]
        self.num_classes = cfg["num_classes"]
        self.ignore_index = head_cfg.get("ignore_index", 255)
        self.update_cfg = head_cfg["update_cfg"]
        feats_channels = head_cfg["feats_channels"]
        self.bottleneck = nn.Sequential(
            nn.Conv2d(head_cfg["in_channels"], feats_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(feats_channels),
            nn.ReLU(inplace=True),
        )
        self.register_buffer("memory", torch.zeros(self.num_classes, feats_channels))
        self.self_attention = SelfAttentionBlock(feats_channels, feats_channels, head_cfg["transform_channels"])
        self.decoder_stage1 = nn.Conv2d(feats_channels, self.num_classes, 1)
        self.decoder_stage2 = nn.Sequential(
            nn.Conv2d(feats_channels * 2, feats_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(feats_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(feats_channels, self.num_classes, 1),
        )

    def read_memory(self, feats, preds):
        batch_size, num_channels, h, w = feats.size()
        weight_cls = F.softmax(preds.permute(0, 2, 3, 1).reshape(-1, self.num_classes), dim=-1)
        selected = torch.matmul(weight_cls, self.memory)
        selected = selected.view(batch_size, h, w, num_channels).permute(0, 3, 1, 2).contiguous()
        return self.self_attention(feats, selected)

    def forward(self, data_meta, learning_rate=None, epoch=None):
        img_size = data_meta.images.size()[2:]
        backbone_outputs = self.transforminputs(self.backbone_net(data_meta.images))
        memory_input = self.bottleneck(backbone_outputs[-1])
        preds_stage1 = self.decoder_stage1(memory_input)
        memory_output = self.read_memory(memory_input, preds_stage1)
        preds_stage2 = self.decoder_stage2(torch.cat([memory_input, memory_output], dim=1))
        if self.mode != "TRAIN":
            return F.interpolate(preds_stage2, size=img_size, mode="bilinear", align_corners=self.align_corners)
        seg_targets = data_meta.getannotations()["seg_targets"]
        momentum = self.update_cfg["momentum_cfg"]["base_momentum"]
        if self.update_cfg["momentum_cfg"]["adjust_by_learning_rate"]:
            momentum = momentum / self.update_cfg["momentum_cfg"]["base_lr"] * learning_rate
        with torch.no_grad():
            features = F.interpolate(memory_input, size=img_size, mode="bilinear", align_corners=self.align_corners)
            batch_size, num_channels, h, w = features.size()
            features = features.permute(0, 2, 3, 1).contiguous().view(batch_size * h * w, num_channels)
            segmentation = seg_targets.long().view(-1)
            for clsid in segmentation.unique().tolist():
                if clsid == self.ignore_index:
                    continue
                feats_cls = features[segmentation == clsid].mean(0)
                if (self.memory[clsid] == 0).all():
                    self.memory[clsid] = feats_cls.detach()
                    continue
                self.memory[clsid] = (1 - momentum) * self.memory[clsid] + momentum * feats_cls
        preds_stage1 = F.interpolate(preds_stage1, size=img_size, mode="bilinear", align_corners=self.align_corners)
        preds_stage2 = F.interpolate(preds_stage2, size=img_size, mode="bilinear", align_corners=self.align_corners)
        loss_stage1 = F.cross_entropy(preds_stage1, seg_targets.long(), ignore_index=self.ignore_index)
        loss_stage2 = F.cross_entropy(preds_stage2, seg_targets.long(), ignore_index=self.ignore_index)
        loss = 0.4 * loss_stage1 + loss_stage2
        return loss, {"loss_stage1": loss_stage1.item(), "loss_stage2": loss_stage2.item(), "loss_total": loss.item()}
