# Source: https://github.com/fastai/fastai/pull/483
# Report: the merged change converts each batch to numpy as it goes, so only one batch is ever on the GPU.
# Shape: same helper, the caller keeps NumPy copies per batch.
# Expect: near-miss: must be silent
import numpy as np
import torch


@torch.no_grad()
def predict_batch(model, x, y, device):
    return model(x.to(device)), y.to(device)


def predict_with_targs(model, loader, device="cuda"):
    model.eval()
    preds, targs = [], []
    for x, y in loader:
        out, target = predict_batch(model, x, y, device)
        preds.append(out.cpu().numpy())
        targs.append(target.cpu().numpy())
    return np.concatenate(preds), np.concatenate(targs)
