# Source: https://github.com/microsoft/SpareNet/issues/12
# Report: SpareNet point-cloud completion training ran out of GPU memory after ~2 epochs because the runner fed the loss tensors themselves (not their values) into its average meters.
# Shape: Fix suggested in the thread: the meter only ever receives .item() values, so the stored history is plain floats.
# Expect: near-miss: must be silent
import torch


class AverageMeter:
    def __init__(self, n_items):
        self.n_items = n_items
        self.reset()

    def reset(self):
        self._val = [0] * self.n_items
        self._sum = [0] * self.n_items
        self._count = [0] * self.n_items
        self.history = []

    def update(self, values):
        self.history.append(values)
        for i, v in enumerate(values):
            self._val[i] = v
            self._sum[i] += v
            self._count[i] += 1

    def avg(self):
        return [s / max(c, 1) for s, c in zip(self._sum, self._count)]


def chamfer(a, b):
    d = torch.cdist(a, b)
    return d.min(2).values.mean() + d.min(1).values.mean()


def train_epoch(model, loader, optimizer, losses: AverageMeter):
    model.train()
    for partial, gt in loader:
        partial, gt = partial.cuda(), gt.cuda()
        coarse, refined = model(partial)
        coarse_loss = chamfer(coarse, gt)
        refine_loss = chamfer(refined, gt)
        loss = coarse_loss + refine_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.update([coarse_loss.item() * 1000, refine_loss.item() * 1000])
    return losses.avg()
