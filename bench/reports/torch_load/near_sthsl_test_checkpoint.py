# Source: https://github.com/LZH-YS1998/STHSL/blob/69eb40915c265cbde266eb1d4c9c142de41f7f9c/test.py
# Report: the test entry point builds the model on args.device and then calls model.load_state_dict(torch.load(args.checkpoint)) with no map_location, so the checkpoint saved from a GPU run is first materialised on that original GPU
# Shape: the same test script maps the checkpoint onto the chosen device while loading (map_location=device), so nothing lands on the GPU the checkpoint was saved from
# Expect: near-miss: must be silent
import argparse

import numpy as np
import torch
import torch.nn as nn


class STForecaster(nn.Module):
    """Spatio-temporal regressor: (batch, areas, window, categories) -> (batch, areas, categories)."""

    def __init__(self, num_categories=4, hidden=64):
        super().__init__()
        self.temporal = nn.GRU(num_categories, hidden, batch_first=True)
        self.head = nn.Linear(hidden, num_categories)

    def forward(self, feats):
        b, a, t, c = feats.shape
        _, h = self.temporal(feats.reshape(b * a, t, c))
        return self.head(h[-1]).view(b, a, c)


def evaluate(model, windows, targets, mean, std, device, batch=8):
    sq, ab, cnt = np.zeros(targets.shape[-1]), np.zeros(targets.shape[-1]), np.zeros(targets.shape[-1])
    with torch.no_grad():
        for st in range(0, len(windows), batch):
            x = torch.as_tensor((windows[st:st + batch] - mean) / std, dtype=torch.float32, device=device)
            pred = model(x).cpu().numpy() * std + mean
            y = targets[st:st + batch]
            mask = y > 0
            sq += (((pred - y) ** 2) * mask).sum(axis=(0, 1))
            ab += (np.abs(pred - y) * mask).sum(axis=(0, 1))
            cnt += mask.sum(axis=(0, 1))
    return {"RMSE": float(np.sqrt(sq.sum() / cnt.sum())), "MAE": float(ab.sum() / cnt.sum()),
            **{f"MAE_{i}": float(ab[i] / max(cnt[i], 1)) for i in range(len(cnt))}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", default="data/nyc_test.npz")
    parser.add_argument("--device", default="cuda:1")
    args = parser.parse_args()

    device = torch.device(args.device)
    data = np.load(args.data)
    model = STForecaster(num_categories=data["targets"].shape[-1])
    model.to(device)
    model.load_state_dict(torch.load(args.checkpoint, map_location=device))
    model.eval()
    print("model loaded")
    res = evaluate(model, data["windows"], data["targets"], data["mean"], data["std"], device)
    print(" ".join(f"{k}={v:.4f}" for k, v in res.items()))


if __name__ == "__main__":
    main()
