# Source: https://github.com/pytorch/pytorch/issues/98002
# Report: a DataLoader with num_workers>0 whose collate_fn returned batches already in GPU memory raised CUDA IPC warnings when the loader was deleted; the maintainer said to keep tensors on the CPU in workers (each worker otherwise creates its own CUDA context) and use pin_memory
# Shape: a module-level collate function, bound to a device with functools.partial and passed as collate_fn, stacks the samples and moves them to the device before returning
# Expect: TML010 line 20; TML010 line 21
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

BATCH_SIZE = 64
NUM_WORKERS = 4


def collate_to_device(samples, device):
    images = torch.stack([img for img, _ in samples])
    labels = torch.tensor([label for _, label in samples], dtype=torch.long)
    images = images.to(device)  # expect: TML010
    labels = labels.to(device)  # expect: TML010
    return images, labels


def make_loader(root, device, train=True):
    dataset = datasets.MNIST(root, train=train, download=True, transform=transforms.ToTensor())
    return DataLoader(
        dataset,
        batch_size=BATCH_SIZE,
        shuffle=train,
        num_workers=NUM_WORKERS,
        collate_fn=partial(collate_to_device, device=device),
    )


def main(root="./data", epochs=2):
    device = torch.device("cuda")
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    train_loader = make_loader(root, device)
    for epoch in range(epochs):
        total = 0.0
        for images, labels in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(f"epoch {epoch}: {total / len(train_loader):.4f}")
    del train_loader


if __name__ == "__main__":
    main()
