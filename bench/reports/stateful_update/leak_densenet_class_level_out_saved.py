# Source: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778
# Report: a DenseNet experiment saved each bottleneck's intermediate output into a class variable (one slot per training batch) so frozen layers could replay it later, and ran out of CUDA memory on 5000 CIFAR images although the user assumed the saved outputs lived in main memory.
# Shape: while a layer is still being trained, its graph-carrying GPU output for every batch of the epoch is written into the class-level list Bottleneck.out_saved, so one activation tensor (with its grad_fn chain back through the network) per batch stays on the device until the layer is frozen.
# Expect: TML001 line 35
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseNet(nn.Module):
    freeze_layer_index = 0


class Bottleneck(nn.Module):
    out_saved = [0] * 900

    def __init__(self, n_channels, growth_rate, layer_index, train_size, batch_sz):
        super().__init__()
        inter_channels = 4 * growth_rate
        self.bn1 = nn.BatchNorm2d(n_channels)
        self.conv1 = nn.Conv2d(n_channels, inter_channels, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(inter_channels)
        self.conv2 = nn.Conv2d(inter_channels, growth_rate, kernel_size=3, padding=1, bias=False)
        self.layer_index = layer_index
        self.active = True
        self.counter = 0
        self.max_counter = -(-train_size // batch_sz)

    def forward(self, x):
        if self.active:
            out = self.conv1(F.relu(self.bn1(x)))
            out = self.conv2(F.relu(self.bn2(out)))
            out = torch.cat((x, out), 1)
            if self.layer_index < DenseNet.freeze_layer_index:
                Bottleneck.out_saved[self.counter] = out  # expect: TML001
                self.counter += 1
                if self.counter >= self.max_counter:
                    self.counter = 0
                    self.active = False
            return out
        replay = Bottleneck.out_saved[self.counter].detach()
        self.counter = (self.counter + 1) % self.max_counter
        return replay


def train_epoch(model, loader, optimizer, device="cuda"):
    model.train()
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
    DenseNet.freeze_layer_index += 1
