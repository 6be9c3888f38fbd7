# Source: https://github.com/JackeyLove1/Leetcode/blob/c5f1b5c2b0d98975458f53998fa9008772bc1440/python/ML/%E6%9E%84%E9%80%A0dataloader.py
# Report: a custom Dataset builds each sample with torch.tensor(...) and moves it with .cuda() inside __getitem__ whenever CUDA is available, and is then served by DataLoader(num_workers=4)
# Shape: a tabular regression script whose Dataset moves every row and label to the GPU in __getitem__; the model is already on CUDA when the 4 forked workers start fetching
# Expect: TML010 line 25; TML010 line 26
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SubDataset(Dataset):
    def __init__(self, data, labels, mean=None, std=None):
        self.data = data.astype(np.float32)
        self.labels = labels.astype(np.float32)
        self.mean = self.data.mean(axis=0) if mean is None else mean
        self.std = self.data.std(axis=0) + 1e-6 if std is None else std

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, item):
        x = torch.tensor((self.data[item] - self.mean) / self.std)
        y = torch.tensor(self.labels[item])
        if torch.cuda.is_available():
            x = x.cuda()  # expect: TML010
            y = y.cuda()  # expect: TML010
        return x, y


def make_loaders(data, labels, batch_size=64, val_frac=0.1):
    n_val = int(len(labels) * val_frac)
    train_set = SubDataset(data[n_val:], labels[n_val:])
    val_set = SubDataset(data[:n_val], labels[:n_val], train_set.mean, train_set.std)
    train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=batch_size, shuffle=False, num_workers=4)
    return train_loader, val_loader


def fit(data, labels, epochs=20, lr=1e-3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(data.shape[1], 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.MSELoss()
    train_loader, val_loader = make_loaders(data, labels)
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x).squeeze(1), y)
            loss.backward()
            optimizer.step()
        model.eval()
        val_loss, n = 0.0, 0
        with torch.no_grad():
            for x, y in val_loader:
                val_loss += criterion(model(x).squeeze(1), y).item() * y.size(0)
                n += y.size(0)
        print(f"epoch {epoch}: val mse {val_loss / max(n, 1):.4f}")
    return model


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2048, 8))
    fit(X, X @ rng.normal(size=8) + 0.1 * rng.normal(size=2048))
