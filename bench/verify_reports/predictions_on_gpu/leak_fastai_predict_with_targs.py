# Source: https://github.com/fastai/fastai/pull/483
# Report: predict_with_targs() on a large test set ran out of GPU memory; the fix converts every batch to NumPy instead of the final result once.
# Shape: a helper returns the model output and target of one batch under no_grad; the caller keeps both per batch on the device and converts once at the end.
# Expect: TML004 lines 22, 23
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device).eval()
batches = [(torch.randn(32, 32), torch.randint(0, 10, (32,))) for _ in range(24)]


@torch.no_grad()
def predict_batch(x, y):
    return model(x.to(device)), y.to(device)


preds, targs = [], []
for x, y in batches:
    out, target = predict_batch(x, y)
    preds.append(out)  # expect: TML004
    targs.append(target)  # expect: TML004
print(torch.cat(preds).cpu().numpy().shape, torch.cat(targs).cpu().numpy().shape)
