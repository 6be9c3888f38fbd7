# Source: https://github.com/EggMuratov/Blood_Cells_Segmentation/blob/1ccb3b10b0f268e2e517e901b64ce9d6c41ba826/Train/Train&Test.py
# Report: audit of a blood-cell U-Net trainer whose epoch_iou += iou_score(outputs, masks) is safe only because the helper detaches to numpy; this is the variant it avoided, a torch soft-IoU helper on the attached logits
# Shape: same loop; iou_score now computes a soft IoU with torch ops on sigmoid(outputs) and returns a 0-dim tensor with its own (never backwarded) graph, which epoch_iou sums across the epoch
# Expect: TML001 line 55
import time

import torch
from tqdm import tqdm


def dice_loss(pred, target, smooth=1e-6):
    pred = torch.sigmoid(pred).view(-1)
    target = target.view(-1)
    intersection = (pred * target).sum()
    return 1 - (2.0 * intersection + smooth) / (pred.sum() + target.sum() + smooth)


def iou_score(pred, target, smooth=1e-6):
    probs = torch.sigmoid(pred).flatten(1)
    target = target.flatten(1)
    inter = (probs * target).sum(1)
    union = probs.sum(1) + target.sum(1) - inter
    return ((inter + smooth) / (union + smooth)).mean()


@torch.no_grad()
def test_model(model, test_loader, device):
    model.eval()
    total_iou = 0.0
    for images, masks in test_loader:
        outputs = model(images.to(device))
        total_iou += iou_score(outputs, masks.to(device)).item()
    return total_iou / len(test_loader)


def train_model(model, train_loader, test_loader, num_epochs, device, lr=1e-3):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    train_losses, train_ious, test_ious = [], [], []
    best_score = 0.6
    for epoch in range(num_epochs):
        model.train()
        epoch_loss = 0.0
        epoch_iou = 0.0
        start_time = time.time()
        with tqdm(total=len(train_loader), desc=f"Epoch {epoch + 1}/{num_epochs}") as pbar:
            for images, masks in train_loader:
                images, masks = images.to(device), masks.to(device)
                optimizer.zero_grad()
                outputs = model(images)
                loss = dice_loss(outputs, masks)
                epoch_loss += loss.item()
                loss.backward()
                optimizer.step()

                epoch_iou += iou_score(outputs, masks)  # expect: TML001
                pbar.set_postfix({"Loss": loss.item(), "IoU": float(epoch_iou) / (pbar.n + 1)})
                pbar.update(1)

        train_losses.append(epoch_loss / len(train_loader))
        train_ious.append(float(epoch_iou) / len(train_loader))
        test_iou = test_model(model, test_loader, device)
        test_ious.append(test_iou)
        print(f"epoch {epoch + 1}: loss {train_losses[-1]:.4f} IoU {train_ious[-1]:.4f} "
              f"test IoU {test_iou:.4f} ({time.time() - start_time:.0f}s)")
        if test_iou > best_score:
            best_score = test_iou
            torch.save(model.state_dict(), "best_blood_cells_unet.pth")
    return train_losses, train_ious, test_ious
