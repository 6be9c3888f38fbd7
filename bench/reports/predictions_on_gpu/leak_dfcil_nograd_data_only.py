# Source: https://github.com/GT-RIPL/AlwaysBeDreaming-DFCIL/issues/9
# Report: The validation routine wrapped only the moving of inputs and targets in torch.no_grad(), leaving the model forward outside it, so validation built autograd graphs and used far more memory.
# Shape: the no_grad block covers the .cuda() calls; the forward call that follows runs with grad enabled.
# Expect: TML003 line 28
import torch


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def validation(model, dataloader, task_offset=0):
    model.eval()
    acc = AverageMeter()
    for inputs, targets in dataloader:
        with torch.no_grad():
            inputs = inputs.cuda()
            targets = targets.cuda() - task_offset
        output = model(inputs)  # expect: TML003
        pred = output.argmax(dim=1)
        acc.update((pred == targets).float().mean().item(), len(targets))
    model.train()
    return acc.avg
