# Source: https://github.com/kozodoi/Pet_Pawpularity/blob/126cf94370f96892c3dec5b65678aaf1ff0428ff/code/valid_epoch.py
# Report: Kaggle (PetFinder Pawpularity) validation epoch with accelerate, edited to keep the gathered per-batch TTA scores on the device and concatenate them there at the end
# Shape: no_grad and loss.item() are kept, but accelerator.gather(...) results (CUDA tensors) are appended as-is, so the whole validation set's scores pile up on the GPU (labels still go to the CPU)
# Expect: TML004 line 62
import numpy as np
import torch
from tqdm.auto import tqdm


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def get_tta_flips(x, tta_idx):
    if tta_idx == 1:
        return x.flip(-1)
    if tta_idx == 2:
        return x.flip(-2)
    return x


def valid_epoch(loader, model, criterion, CFG, accelerator, num_tta=None):
    if num_tta is None:
        num_tta = CFG["num_tta"]
    model.eval()
    val_loss = AverageMeter()
    SCORES = []
    LABELS = []
    pbar = tqdm(range(len(loader)), disable=not accelerator.is_main_process)

    with torch.no_grad():
        for batch_idx, (inputs, feats, labels) in enumerate(loader):
            scores = torch.zeros((inputs.shape[0], CFG["target_size"]), device=accelerator.device)
            for tta_idx in range(num_tta):
                if CFG["features"]:
                    preds = model(get_tta_flips(inputs, tta_idx), feats)
                else:
                    preds = model(get_tta_flips(inputs, tta_idx))
                if CFG["loss_fn"] != "MSE":
                    preds = torch.sigmoid(preds)
                scores += preds / num_tta

            if CFG["target_size"] == 1:
                loss = criterion(scores.view(-1), labels)
            else:
                loss = criterion(scores, labels)
            val_loss.update(loss.item(), inputs.size(0))

            SCORES.append(accelerator.gather(scores))  # expect: TML004
            LABELS.append(accelerator.gather(labels).detach().cpu())
            pbar.update()

    return val_loss.sum, torch.cat(SCORES).cpu().numpy(), np.concatenate(LABELS)
