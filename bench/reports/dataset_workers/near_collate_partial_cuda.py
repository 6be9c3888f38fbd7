# Source: https://github.com/pytorch/pytorch/issues/98002
# Report: a DataLoader with num_workers>0 whose collate_fn returned batches already in GPU memory raised CUDA IPC warnings when the loader was deleted; the maintainer said to keep tensors on the CPU in workers (each worker otherwise creates its own CUDA context) and use pin_memory
# Shape: the maintainer's fix: the partial-bound collate function only stacks CPU tensors; the loader pins memory and the training loop moves each batch with non_blocking=True
# Expect: near-miss: must be silent
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

BATCH_SIZE = 64
NUM_WORKERS = 4


def collate_samples(samples, label_dtype):
    images = torch.stack([img for img, _ in samples])
    labels = torch.tensor([label for _, label in samples], dtype=label_dtype)
    return images, labels


def make_loader(root, train=True):
    dataset = datasets.MNIST(root, train=train, download=True, transform=transforms.ToTensor())
    return DataLoader(
        dataset,
        batch_size=BATCH_SIZE,
        shuffle=train,
        num_workers=NUM_WORKERS,
        pin_memory=True,
        collate_fn=partial(collate_samples, label_dtype=torch.long),
    )


def main(root="./data", epochs=2):
    device = torch.device("cuda")
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    train_loader = make_loader(root)
    for epoch in range(epochs):
        total = 0.0
        for images, labels in train_loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(f"epoch {epoch}: {total / len(train_loader):.4f}")
    del train_loader


if __name__ == "__main__":
    main()
