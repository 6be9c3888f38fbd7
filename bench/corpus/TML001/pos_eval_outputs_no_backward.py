# Modelled on: https://github.com/facebookresearch/SlowFast/issues/411
# Report: during the evaluation epoch, model outputs were added to a list and stayed in GPU memory, giving CUDA OOM on a large validation set.
import torch


def run_eval(model, val_loader):
    model.eval()
    all_preds = []
    for clips, labels in val_loader:
        preds = model(clips.cuda())  # expect: TML003
        all_preds.append(preds)  # expect: TML001
    return torch.cat(all_preds)
