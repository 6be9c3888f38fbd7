# Modelled on: https://github.com/visionml/pytracking/pull/313
# Report: the fix passes a number, not the graph-carrying tensor, to the AverageMeter.
class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


def train_one_epoch(model, criterion, loader, optimizer):
    losses = AverageMeter()
    for x, target in loader:
        x, target = x.cuda(), target.cuda()
        loss = criterion(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update(loss.item(), x.size(0))
    return losses.sum / losses.count
