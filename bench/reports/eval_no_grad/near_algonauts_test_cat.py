# Source: https://github.com/DandelionWow/competition_4_algonauts/blob/483f3ec24fe7d85415d28cb916586ab821c41707/dev/test.py
# Report: test() puts the encoding model in eval mode but runs every forward pass with autograd on, and grows the prediction tensor with torch.cat each batch, so the whole test split's outputs and graphs pile up on the GPU
# Shape: fixed: test() is decorated with @torch.no_grad(), each batch's output is moved to the CPU into a list, and torch.cat runs once after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torchvision import models


class VoxelEncoder(nn.Module):
    """Frozen-ish CNN trunk plus a linear readout to one hemisphere's voxels."""

    def __init__(self, num_voxels, feat_dim=4096):
        super().__init__()
        trunk = models.alexnet(weights="DEFAULT")
        self.features = trunk.features
        self.pool = trunk.avgpool
        self.fc = nn.Sequential(*list(trunk.classifier.children())[:-1])
        self.readout = nn.Linear(feat_dim, num_voxels)

    def forward(self, images):
        x = self.pool(self.features(images)).flatten(1)
        return self.readout(self.fc(x))


@torch.no_grad()
def test(model, data_loader, device):
    model.eval()
    chunks = []
    for images in data_loader:
        images = images.float().to(device)
        out = model(images)
        chunks.append(out.cpu())
    return torch.cat(chunks)


def run_subject(subject, test_set, ckpt_lh, ckpt_rh, lh_voxels, rh_voxels, device="cuda"):
    loader = DataLoader(test_set, batch_size=32, shuffle=False, num_workers=4)
    results = {}
    for hemi, ckpt, n_vox in (("lh", ckpt_lh, lh_voxels), ("rh", ckpt_rh, rh_voxels)):
        model = VoxelEncoder(n_vox).to(device)
        model.load_state_dict(torch.load(ckpt, map_location=device))
        preds = test(model, loader, device)
        results[hemi] = preds.numpy().astype(np.float32)
        print(f"subj{subject:02d} {hemi}: {results[hemi].shape}")
    for hemi, arr in results.items():
        np.save(f"subj{subject:02d}_{hemi}_pred_test.npy", arr)
    return results
