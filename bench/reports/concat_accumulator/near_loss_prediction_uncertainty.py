# Source: https://github.com/Mephisto405/Learning-Loss-for-Active-Learning/blob/3c11ff7cf96d8bb4596209fe56265630fda19da6/main.py
# Report: audit: get_uncertainty() grows a CUDA tensor with torch.cat((uncertainty, pred_loss), 0) for every unlabeled batch, re-copying the whole score vector each step; fixed variant
# Shape: same models dict and cycle loop; the acquisition helper keeps a list of per-batch CPU chunks under no_grad and concatenates them once after the loop
# Expect: near-miss: must be silent
import random

import torch
import torch.nn as nn


def loss_pred_loss(pred, target, margin=1.0):
    pred = (pred - pred.flip(0))[: len(pred) // 2]
    target = (target - target.flip(0))[: len(target) // 2].detach()
    sign = 2 * torch.sign(torch.clamp(target, min=0)) - 1
    return torch.clamp(margin - sign * pred, min=0).sum() / pred.size(0)


def train_epoch(models, criterion, optimizers, loader, epoch, stop_grad_after, curve):
    models["backbone"].train()
    models["module"].train()
    for step, (inputs, labels) in enumerate(loader):
        inputs, labels = inputs.cuda(), labels.cuda()
        for opt in optimizers.values():
            opt.zero_grad()
        scores, feats = models["backbone"](inputs)
        target_loss = criterion(scores, labels)
        if epoch > stop_grad_after:
            feats = [f.detach() for f in feats]
        pred_loss = models["module"](feats).view(-1)
        backbone_loss = target_loss.sum() / target_loss.size(0)
        module_loss = loss_pred_loss(pred_loss, target_loss)
        loss = backbone_loss + 1.0 * module_loss
        loss.backward()
        for opt in optimizers.values():
            opt.step()
        if step % 100 == 0:
            curve.append((backbone_loss.item(), module_loss.item(), loss.item()))


@torch.no_grad()
def evaluate(models, loader):
    models["backbone"].eval()
    correct = total = 0
    for inputs, labels in loader:
        scores, _ = models["backbone"](inputs.cuda())
        correct += (scores.argmax(1) == labels.cuda()).sum().item()
        total += labels.size(0)
    return 100.0 * correct / total


def get_uncertainty(models, unlabeled_loader):
    models["backbone"].eval()
    models["module"].eval()
    chunks = []
    with torch.no_grad():
        for inputs, _ in unlabeled_loader:
            _, feats = models["backbone"](inputs.cuda())
            pred_loss = models["module"](feats).view(-1)
            chunks.append(pred_loss.cpu())
    return torch.cat(chunks, 0)


def active_learning(models, make_loader, test_loader, labeled, unlabeled, cycles=10, epochs=200,
                    budget=1000, subset_size=10000):
    criterion = nn.CrossEntropyLoss(reduction="none")
    curve = []
    for cycle in range(cycles):
        optimizers = {k: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
                      for k, m in models.items()}
        for epoch in range(epochs):
            train_epoch(models, criterion, optimizers, make_loader(labeled), epoch, 120, curve)
        print(f"cycle {cycle}: {len(labeled)} labels, acc {evaluate(models, test_loader):.2f}")
        random.shuffle(unlabeled)
        subset = unlabeled[:subset_size]
        order = torch.argsort(get_uncertainty(models, make_loader(subset, shuffle=False))).tolist()
        labeled = labeled + [subset[i] for i in order[-budget:]]
        unlabeled = [subset[i] for i in order[:-budget]] + unlabeled[subset_size:]
    return labeled, curve
