# Source: https://github.com/MenghaoGuo/AutoDeeplab/issues/14
# Report: Auto-DeepLab architecture search: GPU memory grows every epoch until OOM even with 200 images; the level_2..level_32 lists built in __init__ are appended to by every forward and never emptied (fixed by commit 816dd26 "Clean the forward cache every batch", which re-creates the lists at the top of forward)
# Shape: the per-resolution lists live on self, forward (called once per batch by the Trainer loop) appends the graph-attached cell outputs to them, so every batch's activations and graph stay reachable from the module
# Expect: TML001 line 42; TML001 line 43; TML001 line 54; TML001 line 55; TML001 line 56; TML001 line 57; TML019 line 42; TML019 line 43; TML019 line 54; TML019 line 55; TML019 line 56; TML019 line 57
import torch
import torch.nn as nn
import torch.nn.functional as F

import model_search
from operations import ASPP


class AutoDeeplab(nn.Module):
    def __init__(self, num_classes, num_layers, criterion, num_channel=20, step=5, cell=model_search.Cell):
        super(AutoDeeplab, self).__init__()
        self.level_2 = []
        self.level_4 = []
        self.level_8 = []
        self.level_16 = []
        self.level_32 = []
        self._num_layers = num_layers
        self._criterion = criterion
        self.stem0 = nn.Sequential(nn.Conv2d(3, 64, 3, stride=2, padding=1), nn.BatchNorm2d(64), nn.ReLU())
        self.stem1 = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())
        self.stem2 = nn.Sequential(nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128), nn.ReLU())
        self.cells = nn.ModuleList()
        for _ in range(num_layers):
            self.cells.append(nn.ModuleList([
                cell(step, 5, num_channel * m, num_channel * m, num_channel * m, 1) for m in (1, 2, 4, 8)
            ]))
        self.aspp = nn.ModuleList([ASPP(num_channel * m, 256, 6, 6) for m in (1, 2, 4, 8)])
        self.final_conv = nn.Conv2d(1024, num_classes, 1)
        k = sum(1 for i in range(step) for n in range(2 + i))
        self.alphas_cell = nn.Parameter(1e-3 * torch.randn(k, 8))
        self.alphas_network = nn.Parameter(1e-3 * torch.randn(num_layers, 4, 3))

    def _cell(self, layer, idx, prev, cur, weight_cells):
        return self.cells[layer][idx](prev, cur, weight_cells)

    def forward(self, x):
        temp = self.stem0(x)
        self.level_2.append(self.stem1(temp))  # expect: TML001, TML019
        self.level_4.append(self.stem2(self.level_2[-1]))  # expect: TML001, TML019
        weight_cells = F.softmax(self.alphas_cell, dim=-1)
        alphas = self.alphas_network
        for layer in range(self._num_layers):
            w = alphas[layer]
            l4 = w[0][0] * self._cell(layer, 0, self.level_4[-2] if len(self.level_4) > 1 else None,
                                      self.level_4[-1], weight_cells)
            l8 = w[1][0] * self._cell(layer, 1, None, self.level_4[-1], weight_cells)
            l16 = w[2][0] * self._cell(layer, 2, None, self.level_8[-1] if self.level_8 else l8, weight_cells)
            l32 = w[3][0] * self._cell(layer, 3, None, self.level_16[-1] if self.level_16 else l16,
                                       weight_cells)
            self.level_4.append(l4)  # expect: TML001, TML019
            self.level_8.append(l8)  # expect: TML001, TML019
            self.level_16.append(l16)  # expect: TML001, TML019
            self.level_32.append(l32)  # expect: TML001, TML019
        size = x.size()[2:]
        feats = [self.level_4[-1], self.level_8[-1], self.level_16[-1], self.level_32[-1]]
        outs = [F.interpolate(head(f), size=size, mode="bilinear", align_corners=True)
                for head, f in zip(self.aspp, feats)]
        return self.final_conv(torch.cat(outs, 1))


def training(model, criterion, optimizer, train_loader, epoch):
    train_loss = 0.0
    model.train()
    for i, sample in enumerate(train_loader):
        image, target = sample["image"].cuda(), sample["label"].cuda()
        optimizer.zero_grad()
        output = model(image)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
    print("[Epoch: %d] Loss: %.3f" % (epoch, train_loss))
