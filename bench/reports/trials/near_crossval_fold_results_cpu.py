# Source: https://github.com/deepset-ai/FARM/issues/544
# Report: the proposed fix collects the evaluation results on the CPU (or deletes them) so nothing of a fold stays on the GPU.
# Shape: same per-fold evaluate helper, which moves predictions to CPU before returning them.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, loader, device):
    preds, labels = [], []
    for x, y in loader:
        preds.append(model(x.to(device)).softmax(-1).cpu())
        labels.append(y)
    preds = torch.cat(preds)
    labels = torch.cat(labels)
    return {"preds": preds, "labels": labels, "acc": (preds.argmax(-1) == labels).float().mean().item()}


def cross_validate(make_model, folds, device="cuda", epochs=2):
    all_results = []
    for train_loader, dev_loader in folds:
        model = make_model().to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-5)
        for _ in range(epochs):
            for x, y in train_loader:
                loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        all_results.append(evaluate(model, dev_loader, device))
    return sum(r["acc"] for r in all_results) / len(all_results), all_results
