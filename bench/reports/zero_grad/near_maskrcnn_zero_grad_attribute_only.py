# Source: https://github.com/Dongun-code/mask-rcnn-simple/blob/0814d1b2edb2c2bbe7adceeee77c7103913e6209/train_one.py
# Report: train_one_epoch writes `optimizer.zero_grad` without calling it, so the Mask R-CNN's gradients are never reset and every step applies the sum of all previous batches' gradients
# Shape: fixed: the same loop actually calls optimizer.zero_grad() after the step, so each batch starts from cleared gradients
# Expect: near-miss: must be silent
import torch
import torchvision
from torch.utils.data import DataLoader
from torchvision.models.detection.mask_rcnn import MaskRCNNPredictor
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor


def build_mask_rcnn(num_classes):
    model = torchvision.models.detection.maskrcnn_resnet50_fpn(weights=None)
    in_features = model.roi_heads.box_predictor.cls_score.in_features
    model.roi_heads.box_predictor = FastRCNNPredictor(in_features, num_classes)
    in_mask = model.roi_heads.mask_predictor.conv5_mask.in_channels
    model.roi_heads.mask_predictor = MaskRCNNPredictor(in_mask, 256, num_classes)
    return model


def collate(batch):
    return tuple(zip(*batch))


def log_losses(step, total_loss, loss_dict):
    parts = ", ".join(f"{k}: {v.item():.4f}" for k, v in loss_dict.items())
    print(f"{step}: total_loss {total_loss.item():.4f} | {parts}")


def train_one_epoch(model, optimizer, data_loader, device, epoch, print_every=15):
    model.train()
    for i, (images, targets) in enumerate(data_loader):
        num_iters = epoch * len(data_loader) + i
        images = [img.to(device) for img in images]
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]

        loss_dict = model(images, targets)
        total_loss = sum(loss_dict.values())

        total_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i % print_every == 0:
            log_losses(num_iters, total_loss, loss_dict)


def main(dataset, num_classes=2, epochs=10, device="cuda"):
    loader = DataLoader(dataset, batch_size=2, shuffle=True, num_workers=4, collate_fn=collate)
    model = build_mask_rcnn(num_classes).to(device)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=0.005, momentum=0.9, weight_decay=5e-4)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer, loader, device, epoch)
        torch.save(model.state_dict(), f"maskrcnn_epoch{epoch}.pth")
    return model
