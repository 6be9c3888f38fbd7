# Modelled on: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778
# Report: a DenseNet bottleneck saved its intermediate output in a class-level list from forward; the user expected host memory but got CUDA OOM.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseLayer(nn.Module):
    def __init__(self, in_ch, growth, n_slots):
        super().__init__()
        self.norm = nn.BatchNorm2d(in_ch)
        self.conv = nn.Conv2d(in_ch, growth, kernel_size=3, padding=1, bias=False)
        self.slot = 0
        self.n_slots = n_slots
        self.cached = [None] * n_slots

    def forward(self, x):
        new_features = self.conv(F.relu(self.norm(x)))
        y = torch.cat([x, new_features], dim=1)
        self.cached[self.slot] = y  # expect: TML019
        self.slot = (self.slot + 1) % self.n_slots
        return y
