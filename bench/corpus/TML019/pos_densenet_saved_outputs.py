# Modelled on: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778
# Report: a DenseNet bottleneck saved its intermediate output in a class-level list from forward; the user expected host memory but got CUDA OOM.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    def __init__(self, n_channels, growth_rate, max_counter):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(n_channels)
        self.conv1 = nn.Conv2d(n_channels, 4 * growth_rate, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(4 * growth_rate)
        self.conv2 = nn.Conv2d(4 * growth_rate, growth_rate, kernel_size=3, padding=1, bias=False)
        self.counter = 0
        self.max_counter = max_counter
        self.out_saved = [None] * max_counter

    def forward(self, x):
        out = self.conv1(F.relu(self.bn1(x)))
        out = self.conv2(F.relu(self.bn2(out)))
        out = torch.cat((x, out), 1)
        self.out_saved[self.counter] = out  # expect: TML019
        self.counter = (self.counter + 1) % self.max_counter
        return out
