# Modelled on: https://github.com/ulissigroup/amptorch/issues/12
# Report: the fix: allocate the output of the right size beforehand and fill it in each loop iteration.
import torch


@torch.no_grad()
def predict(model, loader, n_samples, out_dim, device):
    model.eval()
    preds = torch.empty(n_samples, out_dim, device=device)
    start = 0
    for x, _ in loader:
        out = model(x.to(device))
        preds[start:start + out.size(0)] = out
        start += out.size(0)
    return preds
