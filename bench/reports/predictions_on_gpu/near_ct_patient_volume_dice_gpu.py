# Source: https://github.com/KyleMa000/Hematoma-Segmentation/blob/2c91cdc9d1819260e0ea379c0c84ef7f0c8bf671/util/evaluate.py
# Report: audit: the repo's per-patient CT evaluation is correct (slice predictions appended as .cpu() copies under no_grad, stacked once per patient); this is the variant it avoided, keeping every slice's prediction and mask on the GPU until the patient volume is scored
# Shape: as the repo does it: inside no_grad each slice's prediction and mask are appended as .cpu() copies, then stacked once per patient after the slice loop and scored with .item()
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class SoftDice(nn.Module):
    def forward(self, logits, target, weight=1.0, eps=1e-6):
        probs = torch.sigmoid(logits).flatten(1)
        target = target.float().flatten(1)
        inter = (probs * target).sum(1)
        denom = probs.sum(1) + target.sum(1)
        return weight * (1 - (2 * inter + eps) / (denom + eps)).mean()


def window_ct(slices, level=40.0, width=80.0):
    """Fixed brain window, returns normalised slices and a unit weight."""
    lo, hi = level - width / 2, level + width / 2
    slices = slices.clamp(lo, hi).sub(lo).div(width)
    return slices, torch.ones(1)


def evaluate(model, val_patients, device):
    model.eval()
    scorer = SoftDice()
    total_dice = 0.0
    for patient in val_patients:
        loader = DataLoader(patient, batch_size=1, shuffle=False, num_workers=0, pin_memory=True)
        predictions = []
        masks = []
        for images, mask, _condition in loader:
            images, _ = window_ct(images.unsqueeze(1))
            images = images.to(device)
            with torch.no_grad():
                prediction = model(images.float())
                predictions.append(prediction.cpu())
                masks.append(mask.cpu())
        volume_pred = torch.stack(predictions)
        volume_mask = torch.stack(masks)
        total_dice += 1.0 - scorer(volume_pred, volume_mask).item()
    model.train()
    return total_dice / max(len(val_patients), 1)


def run(model, train_loader, val_patients, optimizer, device, epochs=80):
    criterion = SoftDice()
    history = {"loss": [], "val_dice": []}
    for epoch in range(epochs):
        model.train()
        running = 0.0
        for images, masks in train_loader:
            images, weight = window_ct(images)
            images, masks = images.to(device), masks.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images.float()), masks, weight.to(device))
            loss.backward()
            optimizer.step()
            running += loss.item()
        history["loss"].append(running / len(train_loader))
        history["val_dice"].append(evaluate(model, val_patients, device))
    return history
