# Source: https://github.com/martin-chobanyan/domain-adaptation/blob/011193de02ca0684efc5b9d68e0da61e114f7bab/domain_adapt/utils/train.py
# Report: the repo's epoch helpers feed AverageKeeper with loss.detach().item(); this DANN epoch passes the loss tensor itself
# Shape: loss_avg.add(loss) -> AverageKeeper.add does self.sum += x: the summed DANN loss (and its graph history) is chained across the epoch
# Expect: TML001 line 64
from math import exp

import torch
import torch.nn as nn
from torch.autograd import Function


class ReverseGradFunction(Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(scale)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        scale, = ctx.saved_tensors
        return -scale * grad_output, None


class AverageKeeper:
    def __init__(self):
        self.sum = 0
        self.n = 0
        self.running_avg = []

    def add(self, x):
        self.sum += x
        self.n += 1

    def calculate(self):
        avg = self.sum / self.n if self.n else 0
        self.running_avg.append(avg)
        return avg


def da_schedule(epoch, max_epochs, gamma=10):
    p = epoch / max_epochs
    return 2 / (1 + exp(-gamma * p)) - 1


def train_dann_epoch(model, src_loader, tgt_loader, criterion, optimizer, device, da_scale):
    model.train()
    loss_avg = AverageKeeper()
    scale = torch.tensor(da_scale, device=device)
    for (src_x, src_y), (tgt_x, _) in zip(src_loader, tgt_loader):
        src_x, src_y, tgt_x = src_x.to(device), src_y.to(device), tgt_x.to(device)
        src_dom = torch.ones(len(src_x), dtype=torch.int64, device=device)
        tgt_dom = torch.zeros(len(tgt_x), dtype=torch.int64, device=device)

        optimizer.zero_grad()
        src_feat = model.feature_nn(src_x)
        tgt_feat = model.feature_nn(tgt_x)
        out_label = model.label_nn(src_feat)
        out_src_dom = model.domain_nn(ReverseGradFunction.apply(src_feat, scale))
        out_tgt_dom = model.domain_nn(ReverseGradFunction.apply(tgt_feat, scale))
        loss = (criterion(out_label, src_y) + criterion(out_src_dom, src_dom)
                + criterion(out_tgt_dom, tgt_dom))
        loss.backward()
        optimizer.step()
        loss_avg.add(loss)  # expect: TML001
    return loss_avg.calculate()


def run(model, src_loader, tgt_loader, device, num_epochs=100):
    criterion = nn.CrossEntropyLoss()
    model = model.to(device)
    history = []
    for epoch in range(num_epochs):
        lr = 0.01 / (1 + 10 * epoch / num_epochs) ** 0.75
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        train_loss = train_dann_epoch(model, src_loader, tgt_loader, criterion, optimizer,
                                      device, da_schedule(epoch, num_epochs))
        history.append(float(train_loss))
    return history
