# Modelled on: https://github.com/hszhao/semseg/issues/60
# Report: "out of memory" during validation after each epoch; the validate loop ran the model without torch.no_grad().
import time

import torch


def validate(val_loader, model, criterion):
    model.eval()
    end = time.time()
    loss_sum, n = 0.0, 0
    for i, (input, target) in enumerate(val_loader):
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(input)  # expect: TML003
        loss = criterion(output, target)
        loss_sum += loss.item() * input.size(0)
        n += input.size(0)
    print(f"val loss {loss_sum / n:.4f} in {time.time() - end:.1f}s")
    return loss_sum / n
