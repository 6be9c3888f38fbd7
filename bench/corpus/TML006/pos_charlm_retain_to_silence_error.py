# Modelled on: https://github.com/GBLin5566/toward-controlled-generation-of-text-pytorch/issues/9
# Report: the user set retain_graph=True as suggested and memory blew up; only backwards before the last one need it.
import torch
import torch.nn as nn

rnn = nn.GRU(64, 256).cuda()
proj = nn.Linear(256, 64).cuda()
opt = torch.optim.Adam(list(rnn.parameters()) + list(proj.parameters()), lr=1e-3)
stream = torch.randn(10000, 1, 64)

hidden = torch.zeros(1, 1, 256, device="cuda")
for t in range(0, stream.size(0) - 35, 35):
    chunk = stream[t:t + 35].cuda()
    target = stream[t + 1:t + 36].cuda()
    out, hidden = rnn(chunk, hidden)  # expect: TML005
    loss = nn.functional.mse_loss(proj(out), target)
    opt.zero_grad()
    loss.backward(retain_graph=True)  # expect: TML006
    opt.step()
