# Source: https://github.com/opengeos/geoai/blob/44c4ecf9a35c4af337f6d4331fdab377c5e307d6/geoai/landcover_train.py
# Report: geoai landcover trainer (issue #717: val loop kept the whole validation set each epoch) streams a confusion matrix for mean IoU and keeps full tensors only for the weighted-IoU modes; this variant keeps those tensors on the GPU
# Shape: under no_grad, preds = argmax(outputs) and the .to(device) targets are device tensors appended to all_preds/all_targets (bound before the val loop) without .cpu(): every val tile stays on the GPU until torch.cat
# Expect: TML004 lines 66, 67
import torch


def landcover_iou(pred, target, num_classes, ignore_index=None, mode="perclass_frequency"):
    ious, counts = [], []
    for c in range(num_classes):
        if c == ignore_index:
            continue
        p, t = pred == c, target == c
        union = (p | t).sum().item()
        if union:
            ious.append((p & t).sum().item() / union)
            counts.append(t.sum().item())
    total = sum(counts) or 1
    return sum(i * n for i, n in zip(ious, counts)) / total


def train_with_custom_iou(model, train_loader, val_loader, criterion, optimizer, lr_scheduler, num_classes,
                          num_epochs, device, validation_iou_mode="mean", ignore_index=None, use_amp=True):
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    train_losses, val_losses, val_ious = [], [], []
    for epoch in range(num_epochs):
        model.train()
        epoch_loss, num_batches = 0.0, 0
        for images, targets in train_loader:
            images = images.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=use_amp):
                outputs = model(images)
                loss = criterion(outputs, targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            epoch_loss += loss.item()
            num_batches += 1
        train_losses.append(epoch_loss / num_batches)

        model.eval()
        val_loss = 0.0
        stream_iou = validation_iou_mode in ("standard", "mean")
        conf = torch.zeros(num_classes, num_classes, dtype=torch.long, device=device) if stream_iou else None
        all_preds = [] if not stream_iou else None
        all_targets = [] if not stream_iou else None

        with torch.no_grad():
            for images, targets in val_loader:
                images = images.to(device, non_blocking=True)
                targets = targets.to(device, non_blocking=True)
                with torch.cuda.amp.autocast(enabled=use_amp):
                    outputs = model(images)
                    loss = criterion(outputs, targets)
                val_loss += loss.item()
                preds = torch.argmax(outputs, dim=1)

                if stream_iou:
                    t_flat = targets.reshape(-1).to(torch.int64).clamp_(0, num_classes - 1)
                    p_flat = preds.reshape(-1).to(torch.int64)
                    conf += torch.bincount(t_flat * num_classes + p_flat,
                                           minlength=num_classes * num_classes).view(num_classes, num_classes)
                else:
                    all_preds.append(preds)  # expect: TML004
                    all_targets.append(targets)  # expect: TML004

        val_losses.append(val_loss / len(val_loader))
        if stream_iou:
            conf = conf.cpu().to(torch.float64)
            tp = conf.diag()
            denom = conf.sum(0) + conf.sum(1) - tp
            present = denom > 0
            val_iou = (tp[present] / denom[present]).mean().item() if present.any() else 0.0
        else:
            all_preds = torch.cat(all_preds, dim=0)
            all_targets = torch.cat(all_targets, dim=0)
            val_iou = landcover_iou(all_preds, all_targets, num_classes, ignore_index, mode=validation_iou_mode)

        val_ious.append(val_iou)
        lr_scheduler.step(val_iou)
        print(f"Epoch {epoch + 1}: train {train_losses[-1]:.4f} val {val_losses[-1]:.4f} IoU {val_iou:.4f}")
    return train_losses, val_losses, val_ious
