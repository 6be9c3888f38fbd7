# Source: https://github.com/pytorch/pytorch/issues/20260
# Report: A custom transform that moved tensors to the GPU with .cuda() for heavy preprocessing failed with "CUDA error: initialization error" as soon as the DataLoader used num_workers > 0.
# Shape: the dataset's __getitem__ applies a transform that calls .cuda() inside the worker process.
# Expect: TML010 line 16
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class GpuDenoise:
    def __init__(self, kernel_size=5):
        self.kernel = torch.ones(1, 1, kernel_size, kernel_size) / kernel_size**2
        self.pad = kernel_size // 2

    def __call__(self, img):
        img = img.cuda()  # expect: TML010
        kernel = self.kernel.to(img.device)
        out = torch.nn.functional.conv2d(img[None], kernel.expand(img.size(0), 1, -1, -1),
                                         padding=self.pad, groups=img.size(0))
        return out[0]


class NpyImageDataset(Dataset):
    def __init__(self, paths, labels, transform=None):
        self.paths, self.labels, self.transform = paths, labels, transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        img = torch.from_numpy(np.load(self.paths[idx])).float()
        if self.transform is not None:
            img = self.transform(img)
        return img, self.labels[idx]


def make_loader(paths, labels):
    ds = NpyImageDataset(paths, labels, transform=GpuDenoise())
    return DataLoader(ds, batch_size=32, shuffle=True, num_workers=4)
