# Modelled on: https://github.com/pytorch/pytorch/issues/40403
# Report: a synthetic dataset created its tensors with device=torch.device('cuda') and failed with "Cannot re-initialize CUDA in forked subprocess".
import random

import torch
from torch.utils.data import IterableDataset


class SyntheticImages(IterableDataset):
    def __init__(self, num_classes, length):
        self.num_classes = num_classes
        self.length = length

    def __iter__(self):
        for index in range(self.length):
            torch.manual_seed(index)
            image = torch.randn(3, 224, 224, device="cuda")  # expect: TML010
            yield image, random.randint(0, self.num_classes - 1)
