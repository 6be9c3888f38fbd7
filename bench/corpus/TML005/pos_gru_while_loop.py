# Modelled on: https://github.com/pytorch/pytorch/issues/1887
# Report: feeding a GRU its own hidden state in an endless loop made GPU memory grow until out of memory.
import torch
import torch.nn as nn

cell = nn.GRU(64, 64).cuda()
state = torch.randn(1, 1, 64, device="cuda")

steps = 0
while steps < 50_000:
    out, state = cell(state, state)  # expect: TML005
    steps += 1
