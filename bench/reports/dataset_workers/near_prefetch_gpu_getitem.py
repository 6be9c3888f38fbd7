# Source: https://github.com/justheuristic/prefetch_generator/issues/9
# Report: fix suggested in the thread: workers only produce CPU tensors; CUDA is initialised and used only in the master process, after the batch arrives from the (prefetching) loader
# Shape: the same resize/normalise now lives in gpu_augment(), a plain function called from the training loop on the batch; __getitem__ and the collate_fn stay on CPU and the loader pins memory
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F
from prefetch_generator import BackgroundGenerator
from torch.utils.data import DataLoader, Dataset


class DataLoaderX(DataLoader):
    def __iter__(self):
        return BackgroundGenerator(super().__iter__())


class VolumeDataset(Dataset):
    def __init__(self, files, labels):
        self.files = files
        self.labels = labels

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        arr = np.load(self.files[idx]).astype(np.float32)
        x = torch.from_numpy(arr).unsqueeze(0)
        x = x.to(torch.float32)
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
    return torch.stack(out), torch.stack(ys)


def gpu_augment(x, out_size=(96, 96)):
    x = x.cuda(non_blocking=True)
    x = F.interpolate(x, size=out_size, mode="bilinear", align_corners=False)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    std = x.std(dim=(1, 2, 3), keepdim=True)
    return (x - mean) / (std + 1e-6)


def train(model, files, labels, optimizer, criterion, epochs=10):
    dataset = VolumeDataset(files, labels)
    loader = DataLoaderX(dataset, batch_size=16, shuffle=True, num_workers=4,
                         collate_fn=pad_collate, pin_memory=True)
    model.cuda().train()
    for epoch in range(epochs):
        for x, y in loader:
            x = gpu_augment(x)
            y = y.to("cuda", non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
