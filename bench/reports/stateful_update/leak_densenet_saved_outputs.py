# Source: https://discuss.pytorch.org/t/cuda-out-of-memory-error-understanding-how-pytorch-stores-class-variable/13778
# Report: a DenseNet bottleneck caches every batch's output in a class-level list so frozen layers can replay it later; CUDA OOM within the first epoch
# Shape: forward stores the graph-attached block output into a class attribute list (module-level state) indexed by a batch counter; every slot pins that batch's activations
# Expect: TML001 line 42
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseNet(nn.Module):
    freeze_index = 4


class Bottleneck(nn.Module):
    saved_outputs = [None] * 1000

    def __init__(self, channels, growth, layer_index, train_size, batch_size):
        super().__init__()
        inter = 4 * growth
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv1 = nn.Conv2d(channels, inter, kernel_size=1, bias=False)
        self.bn2 = nn.BatchNorm2d(inter)
        self.conv2 = nn.Conv2d(inter, growth, kernel_size=3, padding=1, bias=False)
        self.active = True
        self.layer_index = layer_index
        self.counter = 0
        self.max_counter = (train_size + batch_size - 1) // batch_size

    def _advance(self):
        self.counter += 1
        if self.counter >= self.max_counter:
            self.counter = 0
            return True
        return False

    def forward(self, x):
        if self.active:
            out = self.conv1(F.relu(self.bn1(x)))
            out = self.conv2(F.relu(self.bn2(out)))
            out = torch.cat((x, out), 1)
            if self.layer_index < DenseNet.freeze_index:
                Bottleneck.saved_outputs[self.counter] = out  # expect: TML001
                if self._advance():
                    self.active = False
            return out
        cached = Bottleneck.saved_outputs[self.counter]
        self._advance()
        return cached.detach()


def train(model, loader, optimizer, epochs):
    criterion = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(epochs):
        for images, labels in loader:
            images, labels = images.cuda(), labels.cuda()
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()
        print("epoch", epoch, "loss", loss.item())
