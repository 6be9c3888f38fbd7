# Source: https://github.com/jeshraghian/snntorch/issues/250
# Report: a spiking CNN whose Leaky neurons keep their membrane potential internally (init_hidden) crashed on the second batch with "backward through the graph a second time"; fixed by resetting the hidden states at the start of every forward
# Shape: same stateful neuron and wrapper, but the wrapper's forward resets every neuron's membrane (to None) before the time loop, as the maintainers advised
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class LeakyNeuron(nn.Module):
    """Leaky integrate-and-fire unit that keeps its membrane potential as state."""

    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold
        self.mem = None

    def reset_hidden(self):
        self.mem = None

    def forward(self, cur):
        if self.mem is None:
            self.mem = torch.zeros_like(cur)
        mem = self.beta * self.mem + cur
        spk = torch.sigmoid(4.0 * (mem - self.threshold))
        self.mem = mem - spk * self.threshold
        return spk


class SpikingCNN(nn.Module):
    def __init__(self, num_steps=25, n_classes=10):
        super().__init__()
        self.num_steps = num_steps
        self.net = nn.Sequential(
            nn.Conv2d(1, 12, 5), nn.MaxPool2d(2), LeakyNeuron(),
            nn.Conv2d(12, 64, 5), nn.MaxPool2d(2), LeakyNeuron(),
            nn.Flatten(), nn.Linear(64 * 4 * 4, n_classes), LeakyNeuron(),
        )

    def reset(self):
        for m in self.net.modules():
            if isinstance(m, LeakyNeuron):
                m.reset_hidden()

    def forward(self, x):
        self.reset()  # fresh membrane state for every batch
        spk_rec = []
        for _ in range(self.num_steps):
            spk_rec.append(self.net(x))
        return torch.stack(spk_rec)


def train_epoch(model, loader, optimizer, device="cuda"):
    model.train()
    for data, targets in loader:
        data, targets = data.to(device), targets.to(device)
        spk_rec = model(data)
        loss = F.cross_entropy(spk_rec.sum(0), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()
