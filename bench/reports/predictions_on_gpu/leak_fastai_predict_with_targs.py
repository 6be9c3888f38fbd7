# Source: https://github.com/fastai/fastai/pull/483
# Report: predict_with_targs() on a large test set ran out of GPU memory; the fix calls to_np() for every batch instead of once on the final result.
# Shape: a helper returns the model output and target of one batch (under no_grad); the caller keeps both per batch on the device and converts once at the end.
# Expect: TML004 lines 19, 20
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
        preds.append(out)  # expect: TML004
        targs.append(target)  # expect: TML004
    return torch.cat(preds).cpu().numpy(), torch.cat(targs).cpu().numpy()
