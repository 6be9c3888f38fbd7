# Source: https://github.com/Project-MONAI/research-contributions/issues/392
# Report: tutorial train_epoch does forward, loss.backward(), optimizer.step() per batch with no optimizer.zero_grad()
# Shape: train_epoch(model, loader, optimizer, epoch, loss_func) with an AverageMeter fed loss.item(); dict batches moved to device
# Expect: TML002 line 40
import time

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
max_epochs = 100
batch_size = 1


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0.0
        self.avg = 0.0
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count if self.count > 0 else self.sum


def train_epoch(model, loader, optimizer, epoch, loss_func):
    model.train()
    start_time = time.time()
    run_loss = AverageMeter()
    for idx, batch_data in enumerate(loader):
        data, target = batch_data["image"].to(device), batch_data["label"].to(device)
        logits = model(data)
        loss = loss_func(logits, target)
        loss.backward()
        optimizer.step()  # expect: TML002
        run_loss.update(loss.item(), n=batch_size)
        print(
            "Epoch {}/{} {}/{}".format(epoch, max_epochs, idx, len(loader)),
            "loss: {:.4f}".format(run_loss.avg),
            "time {:.2f}s".format(time.time() - start_time),
        )
        start_time = time.time()
    return run_loss.avg
