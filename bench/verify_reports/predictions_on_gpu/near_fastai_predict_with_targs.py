# Source: https://github.com/fastai/fastai/pull/483
# Report: the fix converts each batch to NumPy as it comes.
# Shape: the same loop keeps out.cpu().numpy() and target.cpu().numpy().
# Expect: near-miss: must be silent
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
    preds.append(out.cpu().numpy())
    targs.append(target.cpu().numpy())
print(len(preds), len(targs))
