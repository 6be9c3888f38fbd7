# Modelled on: https://github.com/pytorch/pytorch/issues/4932
# Report: near-miss: eval() is used to freeze BatchNorm statistics while fine-tuning; the loop does call backward, so the graph is needed.
import torch


def finetune_frozen_bn(model, loader, optimizer, criterion):
    model.eval()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
