# Source: https://github.com/jeshraghian/snntorch/pull/108
# Report: recurrent leaky (RLeaky) neurons keep their output spike as internal state; the fix made detach_hidden()/reset_hidden() handle the spike state as well as the membrane
# Shape: fixed variant: the class-level helpers detach and reset both self.mem and self.spk between truncated-BPTT chunks and sequences
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class SpikeFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem):
        ctx.save_for_backward(mem)
        return (mem > 0).float()

    @staticmethod
    def backward(ctx, grad_out):
        (mem,) = ctx.saved_tensors
        return grad_out / (1.0 + 25.0 * mem.abs()) ** 2


class RecurrentLIF(nn.Module):
    instances = []

    def __init__(self, size, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.V = nn.Parameter(torch.full((size,), 0.5))
        self.mem = torch.zeros(1, size)
        self.spk = torch.zeros(1, size)
        RecurrentLIF.instances.append(self)

    def fire(self, mem):
        return SpikeFn.apply(mem - self.threshold)

    def forward(self, input_):
        reset = (self.mem - self.threshold > 0).float().detach()
        self.mem = self.beta * self.mem + input_ + self.V * self.spk - reset * self.threshold
        self.spk = self.fire(self.mem)
        return self.spk

    @classmethod
    def detach_hidden(cls):
        for layer in cls.instances:
            layer.mem.detach_()
            layer.spk.detach_()

    @classmethod
    def reset_hidden(cls):
        for layer in cls.instances:
            layer.mem = torch.zeros_like(layer.mem)
            layer.spk = torch.zeros_like(layer.spk)


def train_tbptt(net, readout, loader, optimizer, loss_fn, chunk=25):
    for seq, target in loader:                      # seq: [time, batch, features]
        RecurrentLIF.reset_hidden()
        for start in range(0, seq.size(0), chunk):
            out = None
            for t in range(start, min(start + chunk, seq.size(0))):
                out = readout(net(seq[t]))
            loss = loss_fn(out, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            RecurrentLIF.detach_hidden()
