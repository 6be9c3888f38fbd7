# Source: https://github.com/pytorch/pytorch/issues/77159
# Report: several groups ran with num_workers=0 to avoid "Cannot re-initialize CUDA in forked subprocess"; their custom Dataset moved each sample to the GPU as its last step.
# Shape: __getitem__ loads and normalises a sample through a helper, then moves image and label to the CUDA device before returning them; the loader uses worker processes.
# Expect: TML010 line 26
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
        label = torch.tensor(self.labels[index])
        return image.to("cuda"), label.to("cuda")  # expect: TML010


def make_loader(paths, labels, mean, std, batch_size):
    return DataLoader(ScanDataset(paths, labels, mean, std), batch_size=batch_size, shuffle=True, num_workers=4)
