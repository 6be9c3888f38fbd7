# Modelled on: https://github.com/hszhao/semseg/issues/60
# Report: "out of memory" during validation after each epoch; the validate loop ran the model without torch.no_grad().
import time

import torch


def validate(val_loader, model, criterion):
    model.eval()
    end = time.time()
    loss_sum, n = 0.0, 0
    for images, masks in val_loader:
        images, masks = images.cuda(), masks.cuda()
        logits = model(images)  # expect: TML003
        loss = criterion(logits, masks)
        loss_sum += loss.item() * images.size(0)
        n += images.size(0)
    print(f"val loss {loss_sum / n:.4f} in {time.time() - end:.1f}s")
    return loss_sum / n
