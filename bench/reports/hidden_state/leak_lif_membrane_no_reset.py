# Source: https://github.com/fangwei123456/spikingjelly/issues/29
# Report: spiking neurons keep their membrane potential v inside the module; the maintainer explains that without resetting the network after each step, iteration n starts from iteration n-1's v and the two graphs are chained
# Shape: the LIF module rebinds self.v from its previous value in forward(); the training loop never resets the neurons, so self.v carries the last batch's graph into the next one
# Expect: TML005 line 39
import torch
import torch.nn as nn
import torch.nn.functional as F


class SurrogateSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha=4.0):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        sg = torch.sigmoid(ctx.alpha * x)
        return grad_out * ctx.alpha * sg * (1 - sg), None


class LIFNode(nn.Module):
    def __init__(self, tau=2.0, v_threshold=1.0, v_reset=0.0):
        super().__init__()
        self.tau = tau
        self.v_threshold = v_threshold
        self.v_reset = v_reset
        self.v = v_reset

    def reset(self):
        self.v = self.v_reset

    def forward(self, x):
        # charge, fire, hard reset
        v = self.v + (x - (self.v - self.v_reset)) / self.tau
        spike = SurrogateSpike.apply(v - self.v_threshold)
        self.v = v * (1 - spike) + self.v_reset * spike  # expect: TML005
        return spike


class SpikingMLP(nn.Module):
    def __init__(self, n_in=784, n_hidden=800, n_out=10):
        super().__init__()
        self.fc1, self.lif1 = nn.Linear(n_in, n_hidden), LIFNode()
        self.fc2, self.lif2 = nn.Linear(n_hidden, n_out), LIFNode()

    def forward(self, x):
        return self.lif2(self.fc2(self.lif1(self.fc1(x))))


def train_epoch(net, loader, optimizer, T=8, device="cuda"):
    net.train()
    for img, label in loader:
        img, label = img.flatten(1).to(device), label.to(device)
        label_onehot = F.one_hot(label, 10).float()
        out_fr = 0.0
        for t in range(T):
            encoded = (torch.rand_like(img) < img).float()
            out_fr = out_fr + net(encoded)
        out_fr = out_fr / T
        loss = F.mse_loss(out_fr, label_onehot)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
