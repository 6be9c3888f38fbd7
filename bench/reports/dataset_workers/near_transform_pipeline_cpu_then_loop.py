# Source: https://github.com/pytorch/pytorch/issues/13775
# Report: the reporter moved .cuda() into the data pipeline only to speed up a large matmul; the working arrangement keeps the dataset on the CPU and does the GPU work on the batch in the main process.
# Shape: same transform objects without ToCuda; the projection runs on the GPU batch inside the training loop.
# Expect: near-miss: must be silent
import torch
from torch.utils.data import DataLoader, Dataset


class Compose:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, value):
        for step in self.steps:
            value = step(value)
        return value


class Flatten:
    def __call__(self, tensor):
        return tensor.flatten()


class DigitsDataset(Dataset):
    def __init__(self, images, labels, transform):
        self.images = images
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.transform(self.images[index]), self.labels[index]


def train(model, images, labels, basis, optimizer, epochs=5, device="cuda"):
    loader = DataLoader(DigitsDataset(images, labels, Compose([Flatten()])), batch_size=256,
                        num_workers=4, pin_memory=True)
    basis = basis.to(device)
    for epoch in range(epochs):
        for x, y in loader:
            features = x.to(device, non_blocking=True) @ basis
            loss = torch.nn.functional.cross_entropy(model(features), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
