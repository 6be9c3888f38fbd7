# Source: https://github.com/SKrisanski/FSCT/issues/35
# Report: "Cannot re-initialize CUDA in forked subprocess" from a point-cloud Dataset that moved samples to the GPU in __getitem__; fixed shape keeps samples on the CPU (source note: code: https://github.com/SKrisanski/FSCT/blob/f21685044fa21c8adb00b93c3814d2d506ace30f/scripts/train_datasets.py)
# Shape: __getitem__ returns CPU tensors (still builds them with torch); the trainer's loop does `data.pos.to(self.device)` after the batch leaves the worker
# Expect: near-miss: must be silent
import glob
import random

import numpy as np
import torch
from torch_geometric.data import Data, DataLoader, Dataset


class TrainingDataset(Dataset):
    def __init__(self, root_dir, min_sample_points, max_sample_points):
        super().__init__()
        self.filenames = glob.glob(root_dir + "*.npy")
        self.max_sample_points = max_sample_points
        self.min_sample_points = min_sample_points
        self.label_index = 3

    def __len__(self):
        return len(self.filenames)

    def __getitem__(self, index):
        point_cloud = np.load(self.filenames[index])
        if point_cloud.shape[0] > self.max_sample_points:
            keep = list(range(point_cloud.shape[0]))
            random.shuffle(keep)
            point_cloud = point_cloud[keep[: self.max_sample_points]]
        x, y = point_cloud[:, :3], point_cloud[:, self.label_index] - 1
        x = torch.from_numpy(x.copy()).type(torch.float).to("cpu")
        y = torch.from_numpy(y.copy()).type(torch.long)
        # centre the sample box on the origin
        global_shift = torch.mean(x[:, :3], axis=0)
        x = x - global_shift
        return Data(pos=x, x=None, y=y)


class TrainModel:
    def __init__(self, parameters):
        self.parameters = parameters
        self.device = "cuda"

    def run_training(self, model, criterion, optimizer):
        train_dataset = TrainingDataset(
            root_dir=self.parameters["train_dir"],
            min_sample_points=self.parameters["min_points_per_box"],
            max_sample_points=self.parameters["max_points_per_box"],
        )
        train_loader = DataLoader(
            train_dataset,
            batch_size=self.parameters["train_batch_size"],
            shuffle=True,
            num_workers=self.parameters["num_cpu_cores_deep_learning"],
            drop_last=True,
        )
        model = model.to(self.device)
        for epoch in range(self.parameters["num_epochs"]):
            model.train()
            running_loss = 0.0
            for data in train_loader:
                data.pos = data.pos.to(self.device)
                data.y = torch.unsqueeze(data.y, 0).to(self.device)
                outputs = model(data)
                loss = criterion(outputs, data.y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                running_loss += loss.detach().item()
            print("epoch", epoch, "loss", running_loss / len(train_loader))
