# Source: https://github.com/JIA-Lab-research/DecoupleNet/issues/3
# Report: the reporter saw GPU out of memory after some iterations because losses were recorded with += and without .item(), storing every state of the loss for the whole epoch; with .item() GPU usage became stable.
# Shape: the model's forward returns a dict of loss components in training mode; the epoch record adds each component, unconverted, into a dict of running sums.
# Expect: TML001 line 35
import torch
import torch.nn as nn
import torch.nn.functional as F


class Segmenter(nn.Module):
    def __init__(self, backbone: nn.Module, classes=19):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Conv2d(256, classes, 1)
        self.aux = nn.Conv2d(256, classes, 1)

    def forward(self, images, labels=None):
        feats = self.backbone(images)
        logits = F.interpolate(self.head(feats), size=images.shape[-2:], mode="bilinear")
        if labels is None:
            return logits
        aux = F.interpolate(self.aux(feats), size=images.shape[-2:], mode="bilinear")
        return {"seg": F.cross_entropy(logits, labels, ignore_index=255),
                "aux": 0.4 * F.cross_entropy(aux, labels, ignore_index=255)}


def train_epoch(model, loader, optimizer):
    loss_record = {"seg": 0.0, "aux": 0.0}
    for images, labels in loader:
        losses = model(images.cuda(), labels.cuda())
        optimizer.zero_grad()
        sum(losses.values()).backward()
        optimizer.step()
        for name, value in losses.items():
            loss_record[name] += value  # expect: TML001
    return {name: total / len(loader) for name, total in loss_record.items()}
