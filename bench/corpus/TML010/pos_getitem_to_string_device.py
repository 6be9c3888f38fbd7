# Modelled on: https://github.com/cfzd/Ultra-Fast-Lane-Detection-v2/issues/160
# Report: a helper that needs CUDA tensors was called from __getitem__ via data.cuda(), raising the forked-subprocess error.
import numpy as np
import torch
from torch.utils import data


class LaneDataset(data.Dataset):
    def __init__(self, samples, interp):
        self.samples = samples
        self.interp = interp

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        img, points = self.samples[index]
        pts = torch.from_numpy(np.asarray(points, dtype=np.float32)).to("cuda")  # expect: TML010
        lanes = self.interp(pts, 56)
        return torch.from_numpy(img), lanes.cpu()
