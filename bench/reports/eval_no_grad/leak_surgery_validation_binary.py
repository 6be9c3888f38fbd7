# Source: https://github.com/ternaus/robot-surgery-segmentation/pull/12
# Report: "Updated to PyTorch 0.4": validation_binary/validation_multi relied on Variable(volatile=True), which 0.4 ignores, so validation ran with autograd on until the PR wrapped them in `with torch.no_grad():`
# Shape: per-fold validation helper calls model(inputs) after model.eval() with only the dead volatile flag (no grad-disabled context), so every batch builds and saves a full U-Net graph
# Expect: TML003 line 21

import numpy as np
import torch
from torch import nn

import utils


def validation_binary(model: nn.Module, criterion, valid_loader, num_classes=None):
    model.eval()
    losses = []
    jaccard = []

    for inputs, targets in valid_loader:
        inputs = utils.variable(inputs, volatile=True)
        targets = utils.variable(targets)
        outputs = model(inputs)  # expect: TML003
        loss = criterion(outputs, targets)
        losses.append(loss.item())
        jaccard += get_jaccard(targets, (outputs > 0).float())

    valid_loss = np.mean(losses)  # type: float
    valid_jaccard = np.mean(jaccard).astype(np.float64)

    print('Valid loss: {:.5f}, jaccard: {:.5f}'.format(valid_loss, valid_jaccard))
    metrics = {'valid_loss': valid_loss, 'jaccard_loss': valid_jaccard}
    return metrics


def get_jaccard(y_true, y_pred):
    epsilon = 1e-15
    intersection = (y_pred * y_true).sum(dim=-2).sum(dim=-1)
    union = y_true.sum(dim=-2).sum(dim=-1) + y_pred.sum(dim=-2).sum(dim=-1)
    return list(((intersection + epsilon) / (union - intersection + epsilon)).data.cpu().numpy())


def train(args, model, criterion, train_loader, valid_loader, validation, init_optimizer, fold=None):
    optimizer = init_optimizer(args.lr)
    report_each = 10
    valid_losses = []
    for epoch in range(1, args.n_epochs + 1):
        model.train()
        losses = []
        for i, (inputs, targets) in enumerate(train_loader):
            inputs = utils.cuda(inputs)
            targets = utils.cuda(targets)
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if i and i % report_each == 0:
                print('fold {} epoch {} step {} loss {:.5f}'.format(fold, epoch, i, np.mean(losses[-report_each:])))
        valid_metrics = validation(model, criterion, valid_loader, args.num_classes)
        valid_losses.append(valid_metrics['valid_loss'])
        utils.save(model, epoch, fold)
    return valid_losses


def main(args, model, criterion, loaders):
    train_loader, valid_loader = loaders
    return train(args, model, criterion, train_loader, valid_loader, validation_binary,
                 lambda lr: torch.optim.Adam(model.parameters(), lr=lr), fold=args.fold)
