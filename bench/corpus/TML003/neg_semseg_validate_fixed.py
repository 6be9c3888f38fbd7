# Modelled on: https://github.com/hszhao/semseg/issues/60
# Report: the suggested fix: run the forward pass of validation under torch.no_grad().
import torch


def validate(val_loader, model, criterion):
    model.eval()
    loss_sum, n = 0.0, 0
    for i, (input, target) in enumerate(val_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.no_grad():
            output = model(input)
            loss = criterion(output, target)
        loss_sum += loss.item() * input.size(0)
        n += input.size(0)
    return loss_sum / n
