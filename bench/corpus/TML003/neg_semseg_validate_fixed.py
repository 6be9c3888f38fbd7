# Modelled on: https://github.com/hszhao/semseg/issues/60
# Report: the suggested fix: run the forward pass of validation under torch.no_grad().
import torch


def validate(val_loader, model, criterion):
    model.eval()
    loss_sum, n = 0.0, 0
    for images, masks in val_loader:
        images, masks = images.cuda(), masks.cuda()
        with torch.no_grad():
            logits = model(images)
            loss = criterion(logits, masks)
        loss_sum += loss.item() * images.size(0)
        n += images.size(0)
    return loss_sum / n
