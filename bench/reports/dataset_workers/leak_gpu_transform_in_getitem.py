# Source: https://github.com/pytorch/pytorch/issues/20260
# Report: A custom transform that sent each tensor to the GPU with tensor.cuda() to do heavy preprocessing there kept raising "RuntimeError: CUDA error: initialization error" whenever the DataLoader used num_workers > 0.
# Shape: the Dataset applies a GPU transform inside __getitem__, so the `.cuda()` call runs in each forked DataLoader worker process (num_workers=4) rather than in the training process.
# Expect: TML010 line 19
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class GpuResizeNormalize:
    """Heavy resize/normalize done on the GPU to spare the CPU."""

    def __init__(self, size):
        self.size = size

    def __call__(self, img):
        img = torch.from_numpy(img).permute(2, 0, 1).float()
        img = img.cuda()  # expect: TML010
        img = F.interpolate(img.unsqueeze(0), size=self.size, mode="bilinear", align_corners=False)
        return (img.squeeze(0) / 255.0 - 0.5) / 0.5


class FrameDataset(Dataset):
    def __init__(self, frame_paths, labels, transform=None):
        self.frame_paths = frame_paths
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.frame_paths)

    def __getitem__(self, idx):
        img = np.load(self.frame_paths[idx])
        if self.transform is not None:
            img = self.transform(img)
        return img, self.labels[idx]


def make_loader(frame_paths, labels, batch_size=32):
    dataset = FrameDataset(frame_paths, labels, transform=GpuResizeNormalize((224, 224)))
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4)
