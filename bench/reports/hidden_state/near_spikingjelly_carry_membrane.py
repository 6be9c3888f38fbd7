# Source: https://github.com/fangwei123456/spikingjelly/issues/607
# Report: a user wanted LIF neurons to keep their membrane potential across batches instead of reset_net(); copying the previous batch's v back into the neurons raised "backward through the graph a second time" (the carried v still held the old graph).
# Shape: fixed variant: the membrane potentials are still carried into the next batch, but detached when saved (truncated BPTT at the batch boundary).
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from spikingjelly.activation_based import functional, layer, neuron, surrogate


class CSNN(nn.Module):
    def __init__(self, channels=64, num_classes=10):
        super().__init__()
        self.net = nn.Sequential(
            layer.Conv2d(2, channels, kernel_size=3, padding=1, bias=False),
            layer.BatchNorm2d(channels),
            neuron.LIFNode(tau=2.0, surrogate_function=surrogate.ATan()),
            layer.MaxPool2d(2),
            layer.Flatten(),
            layer.Linear(channels * 16 * 16, num_classes),
            neuron.LIFNode(tau=2.0, surrogate_function=surrogate.ATan()),
        )
        functional.set_step_mode(self.net, step_mode="m")

    def forward(self, x_seq):
        return self.net(x_seq).mean(0)


def lif_nodes(model):
    return [m for m in model.modules() if isinstance(m, neuron.LIFNode)]


def train_stateful(model, loader, optimizer, device="cuda", epochs=10):
    nodes = lif_nodes(model)
    carried_v = None
    for epoch in range(epochs):
        model.train()
        for frames, label in loader:
            frames = frames.to(device).transpose(0, 1)  # [T, B, C, H, W]
            label = label.to(device)
            functional.reset_net(model)
            if carried_v is not None:
                for node, v in zip(nodes, carried_v):
                    node.v = v
            out = model(frames)
            loss = F.cross_entropy(out, label)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            # keep the membrane potential for the next batch instead of starting from 0
            carried_v = [node.v.detach() for node in nodes]
        print(f"epoch {epoch}: loss {loss.item():.4f}")
