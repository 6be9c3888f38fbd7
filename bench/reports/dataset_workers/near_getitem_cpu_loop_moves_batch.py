# Source: https://github.com/pytorch/pytorch/issues/77159
# Report: the advice in the thread: return CPU tensors from the Dataset and move the batch to the GPU in the training loop (pinned memory helps).
# Shape: same dataset and helper; __getitem__ returns CPU tensors, the loader pins memory and the loop moves each batch to the device.
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


def load_normalised(path, mean, std):
    image = np.load(path).astype(np.float32)
    return (torch.from_numpy(image) - mean) / std


class ScanDataset(Dataset):
    def __init__(self, paths, labels, mean, std):
        self.paths, self.labels = paths, labels
        self.mean, self.std = mean, std

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        image = load_normalised(self.paths[index], self.mean, self.std)
        return image, torch.tensor(self.labels[index])


def make_loader(paths, labels, mean, std, batch_size):
    return DataLoader(ScanDataset(paths, labels, mean, std), batch_size=batch_size, shuffle=True,
                      num_workers=4, pin_memory=True)


def train_epoch(model, loader, optimizer, criterion):
    for image, label in loader:
        image, label = image.to("cuda", non_blocking=True), label.to("cuda", non_blocking=True)
        optimizer.zero_grad()
        loss = criterion(model(image), label)
        loss.backward()
        optimizer.step()
