# Source: https://github.com/xingyuansun/amorsyn/blob/4cf184457c9d7add88d27ce4a3f72ca5f886c2b1/amortized_synthesis/train.py
# Report: amortized synthesis (3D printing paths) trainer logs per-batch losses in AverageMeter objects for train and val; the repository's meter reduces tensors with value.item() inside update (the val loop here is also put under no_grad, which the repository omits)
# Shape: forward() returns the graph-attached loss and train_losses.update(loss) receives it, but update converts it to a Python float before self.sum += value, so nothing outlives the step; the val forward runs under torch.no_grad()
# Expect: near-miss: must be silent
import copy
import os

import torch
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm


class AverageMeter(object):
    def __init__(self):
        self.sum = 0.
        self.count = 0
        self.avg = 0.

    def update(self, value, n=1):
        if isinstance(value, torch.Tensor):
            value = value.item()
        value = copy.deepcopy(value)
        self.sum += value
        self.count += n
        self.avg = self.sum / self.count


class MLPModel(nn.Module):
    def __init__(self, sizes=(120, 500, 200, 100, 50, 120)):
        super().__init__()
        layers = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers[:-1])

    def forward(self, x):
        return self.net(x)


def forward(model, data, opt):
    x, y, param = (t.to(opt.device).squeeze(0) for t in data)
    pred = model(x)
    loss = torch.sum((pred - y) ** 2)
    if opt.model_name == "baseline":
        loss = loss + opt.smooth_weight * torch.sum((pred[2:] - 2 * pred[1:-1] + pred[:-2]) ** 2)
    return loss, len(x)


def train_val(model, train_loader, val_loader, writer, opt):
    optimizer = torch.optim.Adam(model.parameters(), lr=opt.learning_rate)
    best_val_loss = None
    it_cnt = 0
    for epoch_cnt in range(opt.num_epochs):
        model.train()
        train_losses = AverageMeter()
        for data in tqdm(train_loader):
            loss, cnt = forward(model, data, opt)
            train_losses.update(loss, n=cnt)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            writer.add_scalar("Loss/train_it", loss.item(), it_cnt + 1)
            it_cnt += 1
        writer.add_scalar("Loss/train", float(train_losses.avg), epoch_cnt + 1)

        model.eval()
        val_losses = AverageMeter()
        with torch.no_grad():
            for data in tqdm(val_loader):
                loss, cnt = forward(model, data, opt)
                val_losses.update(loss, n=cnt)
        writer.add_scalar("Loss/val", float(val_losses.avg), epoch_cnt + 1)

        torch.save(model.state_dict(), os.path.join(opt.save_to, "{}.pt".format(epoch_cnt + 1)))
        if best_val_loss is None or val_losses.avg < best_val_loss:
            best_val_loss = float(val_losses.avg)
            torch.save(model.state_dict(), os.path.join(opt.save_to, "best.pt"))


def main(opt, train_loader, val_loader):
    model = MLPModel().to(opt.device)
    writer = SummaryWriter(log_dir=opt.save_to)
    train_val(model, train_loader, val_loader, writer, opt)
    writer.close()
