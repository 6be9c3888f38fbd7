# Source: https://github.com/deepset-ai/FARM/issues/544
# Report: cross-validation for question answering ran CUDA out of memory across folds: the results variable, with its predictions and labels, was kept between folds and could sit on the GPU.
# Shape: each fold's evaluation returns a dict holding the concatenated device predictions; the fold loop appends that dict to a list kept for the final report.
# Expect: TML004 line 32; TML004 lines 13, 14
import torch
import torch.nn as nn


@torch.no_grad()
def evaluate(model, loader, device):
    preds, labels = [], []
    for x, y in loader:
        preds.append(model(x.to(device)).softmax(-1))  # expect: TML004
        labels.append(y.to(device))  # expect: TML004
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
        result = evaluate(model, dev_loader, device)
        all_results.append(result)  # expect: TML004
    return sum(r["acc"] for r in all_results) / len(all_results), all_results
