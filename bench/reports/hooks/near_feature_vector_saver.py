# Source: https://github.com/pdoyle5000/simple_net/blob/528a3c76a1c7a4e2864c0c55a0322df938ac1ae7/forward_hook.py
# Report: audit of a small CNN project's feature-extraction hook: the forward hook turns each output into a detached CPU numpy array and vstacks it into self.features; the handle is kept and removed (correct real code)
# Shape: the saver registers its hook once in __init__, the penultimate-layer features of the whole test set pile up only as host numpy rows, and the hook is removed after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


class SaveFeatureVectors:
    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)
        self.features = None

    def hook_fn(self, module, inputs, outputs):
        out = outputs.detach().cpu().numpy()
        if self.features is None:
            self.features = out
        else:
            self.features = np.vstack((self.features, out))

    def remove(self):
        self.hook.remove()


class SimpleNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.embed = nn.Linear(64, 128)
        self.head = nn.Linear(128, num_classes)

    def forward(self, x):
        return self.head(torch.relu(self.embed(self.features(x))))


def extract_embeddings(net, loader, device="cuda"):
    saver = SaveFeatureVectors(net.embed)
    all_labels, all_paths = [], []
    net.eval()
    with torch.no_grad():
        for inputs, labels, paths in loader:
            net(inputs.float().to(device))
            all_labels.extend(labels.tolist())
            all_paths.extend(paths)
    saver.remove()
    return saver.features, np.asarray(all_labels), all_paths


def nearest_neighbours(features, k=5):
    feats = torch.from_numpy(features)
    feats = feats / feats.norm(dim=1, keepdim=True).clamp_min(1e-8)
    sims = feats @ feats.T
    sims.fill_diagonal_(-1.0)
    return sims.topk(k, dim=1).indices.numpy()


def neighbour_report(net, loader):
    feats, labels, paths = extract_embeddings(net, loader)
    neigh = nearest_neighbours(feats)
    agree = (labels[neigh] == labels[:, None]).mean()
    print(f"{len(paths)} images, neighbour label agreement {agree:.3f}")
    return agree
