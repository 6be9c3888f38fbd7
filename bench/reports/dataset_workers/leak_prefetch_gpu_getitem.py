# Source: https://github.com/justheuristic/prefetch_generator/issues/9
# Report: user wraps the DataLoader in prefetch_generator's BackgroundGenerator and does GPU pre-processing inside Dataset.__getitem__; with num_workers != 0 the loader raises "RuntimeError: Cannot re-initialize CUDA in forked subprocess"; maintainer: only the master process may initialise CUDA, workers must stay on CPU
# Shape: the GPU work hides in a helper method (_gpu_augment) called from __getitem__ and in the collate_fn, both of which run inside the forked workers
# Expect: TML010 line 35; TML010 line 51
import numpy as np
import torch
import torch.nn.functional as F
from prefetch_generator import BackgroundGenerator
from torch.utils.data import DataLoader, Dataset


class DataLoaderX(DataLoader):
    def __iter__(self):
        return BackgroundGenerator(super().__iter__())


class VolumeDataset(Dataset):
    def __init__(self, files, labels, out_size=(96, 96), device="cuda"):
        self.files = files
        self.labels = labels
        self.out_size = out_size
        self.device = device

    def __len__(self):
        return len(self.files)

    def _gpu_augment(self, x):
        x = F.interpolate(x[None], size=self.out_size, mode="bilinear", align_corners=False)[0]
        x = (x - x.mean()) / (x.std() + 1e-6)
        return x

    def __getitem__(self, idx):
        arr = np.load(self.files[idx]).astype(np.float32)
        x = torch.from_numpy(arr).unsqueeze(0)
        x = x.to(self.device)  # expect: TML010
        x = self._gpu_augment(x)
        y = torch.tensor(self.labels[idx])
        return x, y


def pad_collate(batch):
    xs, ys = zip(*batch)
    h = max(x.shape[-2] for x in xs)
    w = max(x.shape[-1] for x in xs)
    out = []
    for x in xs:
        pad = (0, w - x.shape[-1], 0, h - x.shape[-2])
        out.append(F.pad(x, pad))
    x = torch.stack(out)
    y = torch.stack(ys)
    return x, y.cuda()  # expect: TML010


def train(model, files, labels, optimizer, criterion, epochs=10):
    dataset = VolumeDataset(files, labels)
    loader = DataLoaderX(dataset, batch_size=16, shuffle=True, num_workers=4,
                         collate_fn=pad_collate)
    model.cuda().train()
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
