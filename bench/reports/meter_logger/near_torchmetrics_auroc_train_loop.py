# Source: https://github.com/Lightning-AI/torchmetrics/issues/1461
# Report: multilabel AUROC updated inside a training loop stored every batch's predictions together with their autograd history unless they were explicitly detached, so GPU memory ran out
# Shape: as in the report's working variant: the predictions are detached before they reach the metric collection (the states still grow by design, but without any graph)
# Expect: near-miss: must be silent
import torch
from torch import nn
from torchmetrics import MetricCollection
from torchmetrics.classification import MultilabelAUROC, MultilabelAveragePrecision

N_LABELS = 9


def build_metrics(device):
    return MetricCollection(
        {
            "AUC": MultilabelAUROC(num_labels=N_LABELS, ignore_index=-1),
            "AP": MultilabelAveragePrecision(num_labels=N_LABELS, ignore_index=-1),
        }
    ).to(device)


def masked_bce(logits, labels):
    mask = (labels >= 0).float()
    loss = nn.functional.binary_cross_entropy_with_logits(logits, labels.clamp(min=0).float(), reduction="none")
    return (loss * mask).sum() / mask.sum().clamp(min=1.0)


def train_one_epoch(model, loader, optimizer, met, device):
    model.train()
    running = 0.0
    for step, (x, labels) in enumerate(loader):
        x, labels = x.to(device), labels.to(device)
        predictions = model(x)
        loss = masked_bce(predictions, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
        met(torch.sigmoid(predictions.detach()), labels)
    scores = {k: v.item() for k, v in met.compute().items()}
    met.reset()
    return running / max(len(loader), 1), scores


def fit(model, train_loader, epochs, device="cuda"):
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    met = build_metrics(device)
    history = []
    for epoch in range(epochs):
        train_loss, scores = train_one_epoch(model, train_loader, optimizer, met, device)
        history.append({"epoch": epoch, "loss": train_loss, **scores})
        print(history[-1])
    return history
