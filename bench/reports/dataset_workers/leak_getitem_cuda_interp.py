# Source: https://github.com/cfzd/Ultra-Fast-Lane-Detection-v2/issues/160
# Report: A custom dataset called the repo's my_interp inside __getitem__; my_interp needs CUDA tensors, so the sample was moved with .cuda() and the DataLoader workers failed with "Cannot re-initialize CUDA in forked subprocess".
# Shape: __getitem__ moves the lane-point tensor to the GPU so a CUDA-only interpolation helper can run, and the dataset is consumed by a DataLoader with num_workers=4 (forked workers).
# Expect: TML010 line 30
import torch
from torch.utils.data import DataLoader, Dataset


def my_interp(points, num_samples):
    """Resample a lane polyline along y (CUDA-only in the original repo)."""
    assert points.is_cuda, "my_interp expects CUDA tensors"
    ys = torch.linspace(float(points[:, 1].min()), float(points[:, 1].max()), num_samples, device=points.device)
    idx = torch.searchsorted(points[:, 1].contiguous(), ys).clamp(1, points.shape[0] - 1)
    p0, p1 = points[idx - 1], points[idx]
    w = ((ys - p0[:, 1]) / (p1[:, 1] - p0[:, 1] + 1e-6)).unsqueeze(1)
    return p0 + w * (p1 - p0)


class LaneDataset(Dataset):
    def __init__(self, samples, num_points=56):
        self.samples = samples  # list of (HxWx3 uint8 image, Nx2 lane points) numpy pairs
        self.num_points = num_points

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        img, lane = self.samples[index]
        img = torch.from_numpy(img).permute(2, 0, 1).float() / 255.0
        lane = torch.from_numpy(lane).float().cuda()  # expect: TML010
        lane = my_interp(lane, self.num_points)
        return img, lane


def build_loader(samples, batch_size=32):
    dataset = LaneDataset(samples)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=4)
