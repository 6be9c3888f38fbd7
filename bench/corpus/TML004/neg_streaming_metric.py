# Modelled on: https://github.com/facebookresearch/SlowFast/issues/411
# Report: "Is there any way to compute the metrics on the fly?" — keep running counts instead of the outputs.
import torch


@torch.no_grad()
def eval_epoch(val_loader, model, num_classes):
    model.eval()
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long, device="cuda")
    for inputs, labels in val_loader:
        preds = model(inputs.cuda()).argmax(dim=1)
        labels = labels.cuda()
        idx = labels * num_classes + preds
        confusion += torch.bincount(idx, minlength=num_classes ** 2).view(num_classes, num_classes)
    return confusion.diag().sum().item() / confusion.sum().item()
