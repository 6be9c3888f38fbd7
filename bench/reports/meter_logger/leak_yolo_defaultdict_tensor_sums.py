# Source: https://github.com/MultimediaTechLab/YOLO/pull/83
# Report: per-component epoch losses were summed in defaultdict(lambda: torch.tensor(0.0, device=...)) with loss_val * batch_size, leaking memory every batch; the fix sums loss_val.item() in defaultdict(float).
# Shape: the loss function returns the total and a dict of components; the components are folded into a defaultdict of device tensors.
# Expect: TML001 line 32
from collections import defaultdict

import torch
import torch.nn.functional as F


def detection_loss(pred_boxes, pred_cls, boxes, classes):
    components = {
        "box": F.smooth_l1_loss(pred_boxes, boxes),
        "cls": F.cross_entropy(pred_cls, classes),
    }
    return sum(components.values()), components


def train_one_epoch(model, loader, optimizer, device):
    total_loss = defaultdict(lambda: torch.tensor(0.0, device=device))
    seen = 0
    for images, boxes, classes in loader:
        images = images.to(device)
        pred_boxes, pred_cls = model(images)
        loss, components = detection_loss(pred_boxes, pred_cls, boxes.to(device), classes.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_size = images.shape[0]
        seen += batch_size
        for loss_name, loss_val in components.items():
            total_loss[loss_name] += loss_val * batch_size  # expect: TML001
    return {name: (value / seen).item() for name, value in total_loss.items()}
