# Source: https://github.com/dbolya/yolact/blob/master/train.py
# Report: YOLACT training loop with the .item() dropped from the MovingAverage bookkeeping: each loss component tensor goes into the window itself
# Shape: loss_avgs[k].add(losses[k]) hands a graph-attached CUDA scalar to MovingAverage.add(), which appends it to a deque and does self.sum += elem on an object that outlives the loop; the running sum chains every step
# Expect: TML001 line 94
import datetime
import math
import time
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F

loss_types = ["B", "C", "M", "S", "I"]


class MovingAverage:
    """Keeps an average over a window of the last max_window_size items."""

    def __init__(self, max_window_size=1000):
        self.max_window_size = max_window_size
        self.reset()

    def add(self, elem):
        if not math.isfinite(elem):
            print("Warning: Moving average ignored a value of %f" % elem)
            return
        self.window.append(elem)
        self.sum += elem
        if len(self.window) > self.max_window_size:
            self.sum -= self.window.popleft()

    def reset(self):
        self.window = deque()
        self.sum = 0

    def get_avg(self):
        return self.sum / max(len(self.window), 1)


class Yolact(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 3, stride=2, padding=1), nn.ReLU())
        self.box = nn.Conv2d(64, 4, 1)
        self.conf = nn.Conv2d(64, 81, 1)
        self.proto = nn.Conv2d(64, 32, 1)

    def forward(self, x):
        f = self.backbone(x)
        return {"loc": self.box(f), "conf": self.conf(f), "proto": self.proto(f)}


class NetLoss(nn.Module):
    """Runs the net and the criterion together so DataParallel splits both."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, images, targets, masks):
        preds = self.net(images)
        return {
            "B": F.smooth_l1_loss(preds["loc"], targets),
            "C": F.cross_entropy(preds["conf"], masks),
            "M": preds["proto"].sigmoid().mean(),
        }


def train(data_loader, max_iter=800000, lr=1e-3):
    yolact_net = Yolact().cuda()
    net = nn.DataParallel(NetLoss(yolact_net))
    optimizer = torch.optim.SGD(yolact_net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    time_avg = MovingAverage()
    loss_avgs = {k: MovingAverage(100) for k in loss_types}
    last_time = time.time()
    iteration = 0
    for epoch in range(10 ** 6):
        for images, targets, masks in data_loader:
            if iteration == max_iter:
                return
            images, targets, masks = images.cuda(), targets.cuda(), masks.cuda()
            optimizer.zero_grad()
            losses = net(images, targets, masks)
            losses = {k: v.mean() for k, v in losses.items()}  # mean here because of DataParallel
            loss = sum([losses[k] for k in losses])

            loss.backward()  # do this to free up vram even if loss is not finite
            if torch.isfinite(loss).item():
                optimizer.step()

            # add the loss to the moving average for bookkeeping
            for k in losses:
                loss_avgs[k].add(losses[k])  # expect: TML001

            cur_time = time.time()
            elapsed = cur_time - last_time
            last_time = cur_time
            if iteration > 0:
                time_avg.add(elapsed)

            if iteration % 10 == 0:
                eta_str = str(datetime.timedelta(seconds=(max_iter - iteration) * time_avg.get_avg())).split(".")[0]
                total = sum([loss_avgs[k].get_avg() for k in losses])
                loss_labels = sum([[k, loss_avgs[k].get_avg()] for k in loss_types if k in losses], [])
                print(("[%3d] %7d ||" + (" %s: %.3f |" * len(losses)) + " T: %.3f || ETA: %s || timer: %.3f")
                      % tuple([epoch, iteration] + loss_labels + [total, eta_str, elapsed]), flush=True)
            iteration += 1
