# Source: https://github.com/deepset-ai/FARM/issues/544
# Report: keep the fold results on the host.
# Shape: the same folds append the results moved to the CPU.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


def evaluate(model, batches):
    preds, labels = [], []
    with torch.no_grad():
        for x, y in batches:
            preds.append(model(x).argmax(-1))
            labels.append(y)
    return {"preds": torch.cat(preds), "labels": torch.cat(labels)}


all_results = []
for fold in range(24):
    model = nn.Linear(32, 4).to(device)
    batches = [(torch.randn(16, 32, device=device), torch.randint(0, 4, (16,), device=device)) for _ in range(4)]
    result = evaluate(model, batches)
    all_results.append({key: value.cpu() for key, value in result.items()})
print(sum((r["preds"] == r["labels"]).float().mean().item() for r in all_results) / len(all_results))
