# Source: https://github.com/Omar-Nasr/ai_generated_image_classification_defactify_2024/blob/01a217f1e8ba30f2c3485e932646b673f2e8a04f/training_loop.py
# Report: competition training loop (also driven per Optuna trial) with its validation pass switched to eval mode and wrapped in torch.no_grad()
# Shape: the val loop runs under no_grad, so the forward saves nothing; only .item() losses and .cpu() argmax indices are kept
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
from torchmetrics import F1Score

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def fit(backbone, head, criterion, opt_backbone, opt_head, sched, train_loader, epochs, ckpt_dir,
        val_loader=None, trial=None, freeze_backbone=False):
    f1 = F1Score(task="binary")
    best_val = 0.0
    backbone_path = os.path.join(ckpt_dir, "backbone_best.pt")
    head_path = os.path.join(ckpt_dir, "head_best.pt")
    backbone.to(device)
    head.to(device)
    for epoch in range(epochs):
        backbone.train()
        head.train()
        seen_preds, seen_labels = [], []
        running = 0.0
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            if not freeze_backbone:
                opt_backbone.zero_grad()
            opt_head.zero_grad()
            logits = head(backbone(images))
            _, preds = torch.max(logits, 1)
            seen_preds.append(preds.cpu())
            seen_labels.append(labels.cpu())
            loss = criterion(logits, labels)
            loss.backward()
            if not freeze_backbone:
                opt_backbone.step()
            opt_head.step()
            running += loss.item() * images.size(0)
        train_f1 = f1(torch.from_numpy(np.concatenate(seen_preds)), torch.from_numpy(np.concatenate(seen_labels)))
        print(f"epoch {epoch} train loss {running:.3f} f1 {train_f1:.4f}")

        if val_loader is None:
            continue
        running = 0.0
        val_preds, val_labels = [], []
        backbone.eval()
        head.eval()
        with torch.no_grad():
            for images, labels in val_loader:
                images, labels = images.to(device), labels.to(device)
                logits = head(backbone(images))
                loss = criterion(logits, labels)
                _, preds = torch.max(logits, 1)
                running += loss.item() * images.size(0)
                val_preds.append(preds.cpu())
                val_labels.append(labels.cpu())
        sched.step(running)
        val_f1 = f1(torch.from_numpy(np.concatenate(val_preds)), torch.from_numpy(np.concatenate(val_labels)))
        if trial is not None:
            trial.report(float(val_f1), epoch)
        if val_f1 > best_val:
            best_val = val_f1
            torch.save(backbone.state_dict(), backbone_path)
            torch.save(head.state_dict(), head_path)
        print(f"epoch {epoch} val loss {running:.3f} f1 {val_f1:.4f} best {best_val:.4f}")

    backbone.load_state_dict(torch.load(backbone_path, map_location=device))
    head.load_state_dict(torch.load(head_path, map_location=device))
    return backbone, head
