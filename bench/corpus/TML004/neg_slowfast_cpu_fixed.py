# Modelled on: https://github.com/facebookresearch/SlowFast/issues/411
# Report: the usual fix: move outputs and labels to the CPU before keeping them for the metric.
import torch


@torch.no_grad()
def eval_epoch(val_loader, model):
    model.eval()
    all_preds, all_labels = [], []
    for inputs, labels in val_loader:
        inputs = inputs.cuda(non_blocking=True)
        preds = model(inputs)
        all_preds.append(preds.cpu())
        all_labels.append(labels)
    return torch.cat(all_preds), torch.cat(all_labels)
