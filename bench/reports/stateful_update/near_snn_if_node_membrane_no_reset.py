# Source: https://github.com/fangwei123456/spikingjelly/issues/218
# Report: a spiking ResNet with multi-step IF neurons ran out of CUDA memory after some iterations of a plain forward loop; the membrane state was never reset between batches
# Shape: close variant: the neuron carries a detached membrane potential between calls (online-training style) and the loop resets the state after every batch, so no graph crosses calls
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn


class ATanSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha=2.0):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad = ctx.alpha / 2 / (1 + (torch.pi / 2 * ctx.alpha * x) ** 2)
        return grad_output * grad, None


class IFNode(nn.Module):
    def __init__(self, v_threshold=1.0, v_reset=0.0):
        super().__init__()
        self.v_threshold, self.v_reset = v_threshold, v_reset
        self.v = v_reset

    def forward(self, x):
        v = self.v + x
        spike = ATanSpike.apply(v - self.v_threshold)
        self.v = (v * (1.0 - spike) + self.v_reset * spike).detach()
        return spike


class SpikingConvNet(nn.Module):
    """Single-step mode: one call == one simulation time step."""

    def __init__(self, num_classes=100):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1), nn.BatchNorm2d(64))
        self.sn1 = IFNode()
        self.conv2 = nn.Sequential(nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.BatchNorm2d(128))
        self.sn2 = IFNode()
        self.fc = nn.Linear(128, num_classes)

    def reset(self):
        for m in self.modules():
            if isinstance(m, IFNode):
                m.v = m.v_reset

    def forward(self, img):
        x = self.sn1(self.conv1(img))
        x = self.sn2(self.conv2(x))
        return self.fc(x.mean((2, 3)))


def benchmark(device="cuda", iters=1000, batch_size=50, T=4):
    model = SpikingConvNet().to(device)
    start = time.time()
    for i in range(iters):
        img = torch.rand(batch_size, 3, 32, 32, device=device)
        for t in range(T):
            out = model(img)
        model.reset()
        if i % 100 == 0:
            mem = torch.cuda.memory_allocated() / 2**20
            print(f"{i}: {tuple(out.shape)} {mem:.0f} MiB {time.time() - start:.1f}s")
