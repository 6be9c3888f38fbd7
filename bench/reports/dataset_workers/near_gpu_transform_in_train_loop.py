# Source: https://github.com/pytorch/pytorch/issues/20260
# Report: A custom transform that sent each tensor to the GPU with tensor.cuda() to do heavy preprocessing there kept raising "RuntimeError: CUDA error: initialization error" whenever the DataLoader used num_workers > 0.
# Shape: close variant that avoids CUDA in the workers: __getitem__ only returns CPU uint8 tensors (pinned by the loader) and the same GPU resize/normalize runs on whole batches in the training process after they leave the DataLoader.
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class FrameDataset(Dataset):
    def __init__(self, frame_paths, labels):
        self.frame_paths = frame_paths
        self.labels = labels

    def __len__(self):
        return len(self.frame_paths)

    def __getitem__(self, idx):
        img = torch.from_numpy(np.load(self.frame_paths[idx])).permute(2, 0, 1)
        return img, self.labels[idx]


def gpu_resize_normalize(batch, size, device):
    batch = batch.to(device, non_blocking=True).float()
    batch = F.interpolate(batch, size=size, mode="bilinear", align_corners=False)
    return (batch / 255.0 - 0.5) / 0.5


def train_epoch(model, frame_paths, labels, optimizer, device="cuda", batch_size=32):
    loader = DataLoader(FrameDataset(frame_paths, labels), batch_size=batch_size,
                        shuffle=True, num_workers=4, pin_memory=True)
    model.train()
    for imgs, targets in loader:
        imgs = gpu_resize_normalize(imgs, (224, 224), device)
        targets = targets.to(device, non_blocking=True)
        loss = F.cross_entropy(model(imgs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
