# Source: https://github.com/MyGitHubForks/DeepProbabilisticForecasting/blob/f281cb6758bcac9d4d196c25266ffd321d13b900/model/Data.py
# Report: audit of real code (commit "Data now returns cuda tensor"): the traffic Dataset builds each sample directly on the GPU inside __getitem__, and train.py wraps it in a DataLoader
# Shape: fixed: __getitem__ returns CPU tensors; the Dataset's own to_device helper (a plain static method, not called by the workers) moves the pinned batch to CUDA in the main process
# Expect: near-miss: must be silent
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.utils import data

from model.RoseSeq2Seq import Seq2Seq

parser = argparse.ArgumentParser(description="Batched Sequence to Sequence")
parser.add_argument("--h_dim", type=int, default=64)
parser.add_argument("--n_epochs", type=int, default=50)
parser.add_argument("--batch_size", type=int, default=40)
parser.add_argument("--num_workers", type=int, default=4)
parser.add_argument("--initial_lr", type=float, default=1e-2)


class TrafficDataset(data.Dataset):
    def __init__(self, data_path):
        self.data = np.load(data_path)

    def __len__(self):
        return self.data["x"].shape[0]

    def __getitem__(self, index):
        x = torch.from_numpy(self.data["x"][index, :, :, 0]).float()
        y = torch.from_numpy(self.data["y"][index, :, :, 0]).float()
        return x, y

    @staticmethod
    def to_device(batch):
        x, y = batch
        return x.cuda(non_blocking=True), y.cuda(non_blocking=True)


def run_epoch(model, loader, criterion, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, batches = 0.0, 0
    with torch.set_grad_enabled(training):
        for batch in loader:
            x, y = TrafficDataset.to_device(batch)
            prediction = model(x.transpose(0, 1), y.transpose(0, 1))
            loss = criterion(prediction, y.transpose(0, 1))
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item()
            batches += 1
    return total / max(batches, 1)


def main():
    args = parser.parse_args()
    train_set = TrafficDataset("./data/train.npz")
    val_set = TrafficDataset("./data/val.npz")
    train_loader = data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers, pin_memory=True)
    val_loader = data.DataLoader(val_set, batch_size=args.batch_size, shuffle=False, num_workers=args.num_workers, pin_memory=True)
    x_example, _ = train_set[0]
    args.x_dim = x_example.size(1)
    args.sequence_length = x_example.size(0)
    model = Seq2Seq(args).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.initial_lr)
    criterion = nn.L1Loss()
    history = {"train": [], "val": []}
    for epoch in range(1, args.n_epochs + 1):
        history["train"].append(run_epoch(model, train_loader, criterion, optimizer))
        history["val"].append(run_epoch(model, val_loader, criterion))
        print(f"epoch {epoch}: train {history['train'][-1]:.4f} val {history['val'][-1]:.4f}")
        torch.save(model.state_dict(), f"./save/seq2seq_state_dict_{epoch}.pth")


if __name__ == "__main__":
    main()
