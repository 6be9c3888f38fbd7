# Modelled on: https://github.com/pytorch/pytorch/issues/1887
# Report: feeding a GRU its own hidden state in an endless loop made GPU memory grow until out of memory.
import torch
import torch.nn as nn

encoder = nn.GRU(100, 100).cuda()
hidden = torch.randn(1, 1, 100).cuda()

num = 0
while num < 100000:
    output, hidden = encoder(hidden, hidden)  # expect: TML005
    num += 1
