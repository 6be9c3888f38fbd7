# Source: https://github.com/jerpelhan/DAVE/issues/11
# Report: training memory kept growing ("Training memory leak"); the loop sums the criterion's per-term loss dicts and the count error into epoch totals that are tensors still attached to each batch's graph
# Shape: criterion helpers return dicts of loss terms; per-epoch totals are dicts of device tensors rebuilt with a comprehension (total = total + loss * n) plus a tensor counter updated with +=
# Expect: TML001 line 43; TML001 line 44; TML001 line 45
import torch
import torch.nn.functional as F
from torch import nn


class CountCriterion(nn.Module):
    """Returns a dict of named loss terms for a predicted density map."""

    def __init__(self, weight_count=0.1):
        super().__init__()
        self.weight_count = weight_count
        self.losses = {"l2": 1.0, "count": weight_count}

    def forward(self, pred, density):
        l2 = F.mse_loss(pred, density)
        count = (pred.flatten(1).sum(1) - density.flatten(1).sum(1)).abs().mean()
        return {"l2": l2, "count": count}


def train_epoch(model, loader, optimizer, criterion, aux_criterion, device):
    train_losses = {k: torch.tensor(0.0, device=device) for k in criterion.losses}
    aux_losses_total = {k: torch.tensor(0.0, device=device) for k in aux_criterion.losses}
    train_ae = torch.tensor(0.0, device=device)
    model.train()
    for imgs, boxes, density in loader:
        imgs, boxes, density = imgs.to(device), boxes.to(device), density.to(device)
        optimizer.zero_grad()
        out, aux_outs, det_loss = model(imgs, boxes)
        main_losses = criterion(out, density)
        aux_losses = [aux_criterion(a, density) for a in aux_outs]
        loss = (
            sum(main_losses.values()) * 0
            + sum(v for d in aux_losses for v in d.values()) * 0
            + det_loss
        )
        loss.backward()
        optimizer.step()
        n = imgs.size(0)
        train_losses = {k: train_losses[k] + main_losses[k] * n for k in train_losses}  # expect: TML001
        aux_losses_total = {k: aux_losses_total[k] + sum(a[k] for a in aux_losses) * n for k in aux_losses_total}  # expect: TML001
        train_ae += torch.abs(density.flatten(1).sum(1) - out.flatten(1).sum(1)).sum()  # expect: TML001
    return train_losses, aux_losses_total, train_ae


@torch.no_grad()
def validate(model, loader, criterion, device):
    model.eval()
    val_losses = {k: torch.tensor(0.0, device=device) for k in criterion.losses}
    for imgs, boxes, density in loader:
        imgs, boxes, density = imgs.to(device), boxes.to(device), density.to(device)
        out, _, _ = model(imgs, boxes)
        main_losses = criterion(out, density)
        val_losses = {k: val_losses[k] + main_losses[k] * imgs.size(0) for k in val_losses}
    return {k: v.item() / len(loader.dataset) for k, v in val_losses.items()}
