# Source: https://github.com/EggMuratov/Blood_Cells_Segmentation/blob/1ccb3b10b0f268e2e517e901b64ce9d6c41ba826/Train/Train&Test.py
# Report: audit of a blood-cell U-Net trainer: epoch_iou += iou_score(outputs, masks) is summed straight from the graph-attached outputs, but the helper detaches, moves to numpy and returns a sklearn float (correct real code)
# Shape: per-epoch loop adds loss.item() and the helper's plain-float IoU to running totals; the only tensor work on outputs inside iou_score starts with .detach().cpu()
# Expect: near-miss: must be silent
import time

import torch
from sklearn.metrics import jaccard_score
from tqdm import tqdm


def dice_loss(pred, target, smooth=1e-6):
    pred = torch.sigmoid(pred).view(-1)
    target = target.view(-1)
    intersection = (pred * target).sum()
    return 1 - (2.0 * intersection + smooth) / (pred.sum() + target.sum() + smooth)


def iou_score(pred, target):
    pred = pred.view(-1).detach().cpu().numpy()
    target = target.view(-1).detach().cpu().numpy()
    return jaccard_score(target > 0.5, pred > 0.0)


@torch.no_grad()
def test_model(model, test_loader, device):
    model.eval()
    total_iou = 0.0
    for images, masks in test_loader:
        outputs = model(images.to(device))
        total_iou += iou_score(outputs, masks.to(device))
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

                epoch_iou += iou_score(outputs, masks)
                pbar.set_postfix({"Loss": loss.item(), "IoU": epoch_iou / (pbar.n + 1)})
                pbar.update(1)

        train_losses.append(epoch_loss / len(train_loader))
        train_ious.append(epoch_iou / len(train_loader))
        test_iou = test_model(model, test_loader, device)
        test_ious.append(test_iou)
        print(f"epoch {epoch + 1}: loss {train_losses[-1]:.4f} IoU {train_ious[-1]:.4f} "
              f"test IoU {test_iou:.4f} ({time.time() - start_time:.0f}s)")
        if test_iou > best_score:
            best_score = test_iou
            torch.save(model.state_dict(), "best_blood_cells_unet.pth")
    return train_losses, train_ious, test_ious
