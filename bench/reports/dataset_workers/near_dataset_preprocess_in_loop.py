# Source: https://github.com/pytorch/pytorch/issues/2517
# Report: the thread's working setups keep CUDA out of the workers: the dataset returns CPU samples and the GPU preprocessing runs on whole batches in the main process.
# Shape: same preprocessing network, now applied by the training loop to each batch after it is moved to the device; the dataset only indexes CPU tensors.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SampleDataset(Dataset):
    def __init__(self, samples, labels):
        self.samples, self.labels = samples, labels

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        return self.samples[index], self.labels[index]


def train_epoch(model, preprocess_net: nn.Module, samples, labels, optimizer, criterion, device="cuda"):
    loader = DataLoader(SampleDataset(samples, labels), batch_size=32, num_workers=4, pin_memory=True)
    preprocess_net = preprocess_net.to(device).eval()
    for batch, target in loader:
        with torch.no_grad():
            batch = preprocess_net(batch.to(device))
        optimizer.zero_grad()
        loss = criterion(model(batch), target.to(device))
        loss.backward()
        optimizer.step()
