# Source: https://github.com/pytorch/pytorch/issues/13775
# Report: a ToCuda() transform appended to the dataset's Compose pipeline (to run a large matmul on the GPU during preprocessing) made the loader fail with num_workers=1.
# Shape: the CUDA copy happens in a transform object's __call__, reached from __getitem__ through self.transform.
# Expect: TML010 line 45
import torch
from torch.utils.data import DataLoader, Dataset


class ToCuda:
    def __init__(self):
        self.is_cuda = torch.cuda.is_available()

    def __call__(self, tensor):
        return tensor.cuda() if self.is_cuda else tensor


class ProjectOnBasis:
    def __init__(self, basis):
        self.basis = basis

    def __call__(self, tensor):
        return tensor.flatten() @ self.basis.to(tensor.device)


class Compose:
    def __init__(self, steps):
        self.steps = steps

    def __call__(self, value):
        for step in self.steps:
            value = step(value)
        return value


class DigitsDataset(Dataset):
    def __init__(self, images, labels, transform):
        self.images = images
        self.labels = labels
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.transform(self.images[index]), self.labels[index]  # expect: TML010


def make_loader(images, labels, basis):
    transform = Compose([ToCuda(), ProjectOnBasis(basis)])
    return DataLoader(DigitsDataset(images, labels, transform), batch_size=256, num_workers=1)
