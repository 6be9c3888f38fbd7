# Source: https://github.com/SKrisanski/FSCT/issues/35
# Report: running train.py fails with "RuntimeError: Cannot re-initialize CUDA in forked subprocess": the point-cloud Dataset moves every sample to the GPU inside __getitem__ while the DataLoader forks workers (source note: code: https://github.com/SKrisanski/FSCT/blob/f21685044fa21c8adb00b93c3814d2d506ace30f/scripts/train_datasets.py)
# Shape: TrainingDataset.__getitem__ keeps `.to(self.device)` on the xyz and label tensors (device "cuda" is handed in by the trainer), loader uses num_workers > 0
# Expect: TML010 line 32; TML010 line 33
import glob
import random

import numpy as np
import torch
from torch_geometric.data import Data, DataLoader, Dataset


class TrainingDataset(Dataset):
    def __init__(self, root_dir, device, min_sample_points, max_sample_points):
        super().__init__()
        self.filenames = glob.glob(root_dir + "*.npy")
        self.max_sample_points = max_sample_points
        self.min_sample_points = min_sample_points
        self.label_index = 3
        self.device = device

    def __len__(self):
        return len(self.filenames)

    def __getitem__(self, index):
        point_cloud = np.load(self.filenames[index])
        if point_cloud.shape[0] > self.max_sample_points:
            keep = list(range(point_cloud.shape[0]))
            random.shuffle(keep)
            point_cloud = point_cloud[keep[: self.max_sample_points]]
        x, y = point_cloud[:, :3], point_cloud[:, self.label_index] - 1
        x = torch.from_numpy(x.copy()).type(torch.float).to(self.device)  # expect: TML010
        y = torch.from_numpy(y.copy()).type(torch.long).to(self.device)  # expect: TML010
        # centre the sample box on the origin
        global_shift = torch.mean(x[:, :3], axis=0)
        x = x - global_shift
        return Data(pos=x, x=None, y=y)


def run_training(parameters, model, criterion, optimizer):
    device = "cuda"
    train_dataset = TrainingDataset(
        root_dir=parameters["train_dir"],
        device=device,
        min_sample_points=parameters["min_points_per_box"],
        max_sample_points=parameters["max_points_per_box"],
    )
    train_loader = DataLoader(
        train_dataset,
        batch_size=parameters["train_batch_size"],
        shuffle=True,
        num_workers=parameters["num_cpu_cores_deep_learning"],
        drop_last=True,
    )
    model = model.to(device)
    for epoch in range(parameters["num_epochs"]):
        model.train()
        running_loss = 0.0
        for data in train_loader:
            data.y = torch.unsqueeze(data.y, 0)
            outputs = model(data)
            loss = criterion(outputs, data.y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running_loss += loss.detach().item()
        print("epoch", epoch, "loss", running_loss / len(train_loader))
