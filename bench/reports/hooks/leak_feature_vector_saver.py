# Source: https://github.com/pdoyle5000/simple_net/blob/528a3c76a1c7a4e2864c0c55a0322df938ac1ae7/forward_hook.py
# Report: audit of a small CNN project's feature-extraction hook (detached CPU rows, handle removed); this is the variant it avoided, re-registering the hook on the persistent layer for every batch
# Shape: the saver no longer registers itself; the extraction loop calls register_forward_hook on net.embed each batch and never removes the handles, so batch k runs k hooks and features are stacked k times
# Expect: TML007 line 46
import numpy as np
import torch
import torch.nn as nn


class SaveFeatureVectors:
    def __init__(self):
        self.features = None

    def hook_fn(self, module, inputs, outputs):
        out = outputs.detach().cpu().numpy()
        if self.features is None:
            self.features = out
        else:
            self.features = np.vstack((self.features, out))

    def reset(self):
        self.features = None


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
    saver = SaveFeatureVectors()
    all_labels, all_paths = [], []
    net.eval()
    with torch.no_grad():
        for inputs, labels, paths in loader:
            net.embed.register_forward_hook(saver.hook_fn)  # expect: TML007
            net(inputs.float().to(device))
            all_labels.extend(labels.tolist())
            all_paths.extend(paths)
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
