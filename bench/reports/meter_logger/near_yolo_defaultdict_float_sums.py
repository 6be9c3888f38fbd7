# Source: https://github.com/MultimediaTechLab/YOLO/pull/83
# Report: the accepted variation: total_loss = defaultdict(float); total_loss[loss_name] += loss_val.item() * batch_size.
# Shape: same helper returning the total and a dict of components; the epoch sums are floats.
# Expect: near-miss: must be silent
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
    total_loss = defaultdict(float)
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
            total_loss[loss_name] += loss_val.item() * batch_size
    return {name: value / seen for name, value in total_loss.items()}
