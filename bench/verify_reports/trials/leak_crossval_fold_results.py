# Source: https://github.com/deepset-ai/FARM/issues/544
# Report: cross-validation ran CUDA out of memory across folds: the results variable, with its predictions and labels, was kept between folds and could sit on the GPU.
# Shape: each fold's evaluation returns a dict holding the concatenated device predictions; the fold loop appends that dict to a list kept for the final report.
# Expect: TML004 lines 16, 26
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


def evaluate(model, batches):
    preds, labels = [], []
    with torch.no_grad():
        for x, y in batches:
            preds.append(model(x).argmax(-1))  # expect: TML004
            labels.append(y)
    return {"preds": torch.cat(preds), "labels": torch.cat(labels)}


all_results = []
for fold in range(24):
    model = nn.Linear(32, 4).to(device)
    batches = [(torch.randn(16, 32, device=device), torch.randint(0, 4, (16,), device=device)) for _ in range(4)]
    result = evaluate(model, batches)
    all_results.append(result)  # expect: TML004
print(sum((r["preds"] == r["labels"]).float().mean().item() for r in all_results) / len(all_results))
