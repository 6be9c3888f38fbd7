# Source: https://github.com/pytorch/pytorch/issues/20260
# Report: A custom transform that moved tensors to the GPU with .cuda() for heavy preprocessing failed with "CUDA error: initialization error" as soon as the DataLoader used num_workers > 0.
# Shape: the dataset stays on the CPU in the workers; the batch is moved to the GPU and denoised in the main process's training loop.
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class GpuDenoise:
    def __init__(self, kernel_size=5):
        self.kernel = torch.ones(1, 1, kernel_size, kernel_size) / kernel_size**2
        self.pad = kernel_size // 2

    def __call__(self, imgs):
        kernel = self.kernel.to(imgs.device).expand(imgs.size(1), 1, -1, -1)
        return torch.nn.functional.conv2d(imgs, kernel, padding=self.pad, groups=imgs.size(1))


class NpyImageDataset(Dataset):
    def __init__(self, paths, labels):
        self.paths, self.labels = paths, labels

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        img = torch.from_numpy(np.load(self.paths[idx])).float()
        return img, self.labels[idx]


def train_epoch(model, paths, labels, optimizer, criterion):
    loader = DataLoader(NpyImageDataset(paths, labels), batch_size=32, shuffle=True,
                        num_workers=4, pin_memory=True)
    denoise = GpuDenoise()
    for imgs, y in loader:
        imgs = denoise(imgs.cuda(non_blocking=True))
        loss = criterion(model(imgs), y.cuda(non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
