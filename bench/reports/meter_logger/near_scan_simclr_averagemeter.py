# Source: https://github.com/wvangansbeke/Unsupervised-Classification/blob/57dff9223303ad1d906cb1e54c0a04a78dee720d/utils/train_utils.py
# Report: audited SimCLR pretext training loop (SCAN repo): the loss is handed to an epoch-long AverageMeter whose update() does self.sum += val * n; the repository passes loss.item()
# Shape: as in the repository: the meter only ever receives loss.item(), a Python float, so self.sum never holds a tensor
# Expect: near-miss: must be silent
import torch


class AverageMeter(object):
    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


def simclr_train(train_loader, model, criterion, optimizer, epoch):
    losses = AverageMeter("Loss", ":.4e")
    model.train()

    for i, batch in enumerate(train_loader):
        images = batch["image"]
        images_augmented = batch["image_augmented"]
        b, c, h, w = images.size()
        input_ = torch.cat([images.unsqueeze(1), images_augmented.unsqueeze(1)], dim=1)
        input_ = input_.view(-1, c, h, w).cuda(non_blocking=True)

        output = model(input_).view(b, 2, -1)
        loss = criterion(output)
        losses.update(loss.item())

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if i % 25 == 0:
            print("Epoch: [{}][{}/{}]\t{}".format(epoch, i, len(train_loader), losses))
    return losses.avg
