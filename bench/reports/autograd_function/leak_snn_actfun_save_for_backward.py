# Source: https://github.com/hmf17/snn_starter/blob/master/SpikingModel.py
# Report: one edit from snn_starter's spiking activation: the membrane potential needed by the surrogate gradient is parked on ctx instead of going through ctx.save_for_backward
# Shape: ctx.input is a plain attribute holding a tensor: autograd cannot free it after backward and it stays alive as long as the ctx (every time step of every spiking layer keeps one membrane map)
# Expect: TML018 line 17
import torch
import torch.nn as nn
import torch.nn.functional as F

thresh = 0.25
lens = 0.5
decay = 0.2


class ActFun(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.input = input  # expect: TML018
        return input.gt(thresh).float()

    @staticmethod
    def backward(ctx, grad_output):
        input = ctx.input
        grad_input = grad_output.clone()
        temp = abs(input - thresh) < lens
        return grad_input * temp.float()


act_fun = ActFun.apply


def mem_update(ops, x, mem, spike):
    mem = mem * decay * (1.0 - spike) + ops(x)
    spike = act_fun(mem)
    return mem, spike


class SpikingEncoder(nn.Module):
    def __init__(self, in_channels=2, channels=(32, 64), time_window=10):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, channels[0], 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(channels[0], channels[1], 3, stride=2, padding=1)
        self.head = nn.Conv2d(channels[1], 2, 1)
        self.time_window = time_window

    def forward(self, events):
        b, t, c, h, w = events.shape
        c1_mem = c1_spike = torch.zeros(b, self.conv1.out_channels, h // 2, w // 2, device=events.device)
        c2_mem = c2_spike = torch.zeros(b, self.conv2.out_channels, h // 4, w // 4, device=events.device)
        c2_sum = torch.zeros_like(c2_mem)
        for step in range(self.time_window):
            x = events[:, step % t]
            c1_mem, c1_spike = mem_update(self.conv1, x, c1_mem, c1_spike)
            c2_mem, c2_spike = mem_update(self.conv2, c1_spike, c2_mem, c2_spike)
            c2_sum = c2_sum + c2_spike
        return self.head(c2_sum / self.time_window)


def train_epoch(model, loader, optimizer, device="cuda"):
    model.train()
    running = 0.0
    for i, (events, flow) in enumerate(loader):
        events, flow = events.to(device), flow.to(device)
        pred = model(events)
        loss = F.l1_loss(pred, F.interpolate(flow, size=pred.shape[-2:]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
        if i % 50 == 49:
            print(f"[{i + 1}] loss {running / 50:.4f}")
            running = 0.0
