# Modelled on: https://github.com/facebookresearch/SlowFast/issues/411
# Report: during the evaluation epoch, outputs and labels were added to lists and remained in GPU memory: CUDA OOM on a large validation set.
import torch


@torch.no_grad()
def eval_epoch(val_loader, model):
    model.eval()
    all_preds, all_labels = [], []
    for inputs, labels in val_loader:
        inputs = inputs.cuda(non_blocking=True)
        labels = labels.cuda()
        preds = model(inputs)
        all_preds.append(preds)  # expect: TML004
        all_labels.append(labels)  # expect: TML004
    return torch.cat(all_preds), torch.cat(all_labels)
