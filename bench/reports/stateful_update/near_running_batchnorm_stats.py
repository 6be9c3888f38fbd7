# Source: https://forums.fast.ai/t/running-batch-norm-tweaks/43615
# Report: fast.ai course thread on RunningBatchNorm: the running sums/sqrs buffers updated from the batch statistics carry the previous batch's graph ("backward through the graph a second time"); the course code detaches them at the top of update_stats
# Shape: the course code: self.sums/self.sqrs are detached in place before each update, so the running average only carries the current batch's graph (truncated like a detached hidden state)
# Expect: near-miss: must be silent
import math

import torch
import torch.nn as nn


class RunningBatchNorm(nn.Module):
    def __init__(self, nf, mom=0.1, eps=1e-5):
        super().__init__()
        self.mom, self.eps = mom, eps
        self.mults = nn.Parameter(torch.ones(nf, 1, 1))
        self.adds = nn.Parameter(torch.zeros(nf, 1, 1))
        self.register_buffer("sums", torch.zeros(1, nf, 1, 1))
        self.register_buffer("sqrs", torch.zeros(1, nf, 1, 1))
        self.register_buffer("count", torch.tensor(0.0))
        self.batch = 0

    def update_stats(self, x):
        bs, nc, *_ = x.shape
        self.sums.detach_()
        self.sqrs.detach_()
        dims = (0, 2, 3)
        s = x.sum(dims, keepdim=True)
        ss = (x * x).sum(dims, keepdim=True)
        c = s.new_tensor(x.numel() / nc)
        mom1 = s.new_tensor(1 - (1 - self.mom) / math.sqrt(bs - 1))
        self.sums += mom1 * (s - self.sums)
        self.sqrs += mom1 * (ss - self.sqrs)
        self.count += mom1 * (c - self.count)
        self.batch += bs
        return self._scale_shift()

    def _scale_shift(self):
        means = self.sums / self.count
        varns = (self.sqrs / self.count) - means * means
        if self.batch < 20:
            varns = varns.clamp_min(0.01)
        factor = self.mults / (varns + self.eps).sqrt()
        offset = self.adds - means * factor
        return factor, offset

    def forward(self, x):
        if self.training:
            factor, offset = self.update_stats(x)
        else:
            factor, offset = self._scale_shift()
        return x * factor + offset


def conv_rbn(ni, nf):
    return nn.Sequential(nn.Conv2d(ni, nf, 3, padding=1, bias=False), RunningBatchNorm(nf), nn.ReLU())


def fit(model, train_dl, opt, loss_func, epochs):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            xb, yb = xb.cuda(), yb.cuda()
            loss = loss_func(model(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
        print(epoch, loss.item())
