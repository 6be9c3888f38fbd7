# Source: https://github.com/LinZhu111/EVSNN/issues/6
# Report: EVSNN (spiking recurrent net for event-camera reconstruction) carries membrane-potential states chunk to chunk; the thread says states must be kept detached to save memory, this is the version without it
# Shape: the no_grad block around the per-bin step is dropped: `states = membrane_potential` feeds a graph-attached output back in, so each bin's graph links to all previous ones
# Expect: TML005 line 46
import os

import numpy as np
import torch
import torch.nn as nn
from PIL import Image


class SpikingRecNet(nn.Module):
    def __init__(self, channels=16, tau=2.0):
        super().__init__()
        self.head = nn.Conv2d(1, channels, 3, padding=1)
        self.tail = nn.Conv2d(channels, 1, 3, padding=1)
        self.tau = tau

    def forward(self, x, states=None):
        v = self.head(x)
        if states is not None:
            v = v + (1.0 - 1.0 / self.tau) * states
        return self.tail(torch.sigmoid(v))


def normalize_image(img):
    lo, hi = np.percentile(img, 1), np.percentile(img, 99)
    return np.clip((img - lo) / max(hi - lo, 1e-5), 0.0, 1.0)


def reconstruct(chunks, weights_path, save_path, height, width, num_bins=5):
    device = "cuda:0"
    net = SpikingRecNet().to(device)
    net.load_state_dict(torch.load(weights_path, map_location=device))
    os.makedirs(save_path, exist_ok=True)

    states = None
    for i, voxel in enumerate(chunks):
        event_tensor = torch.from_numpy(voxel)[np.newaxis].to(device)
        nz = event_tensor != 0
        event_tensor[nz] = (event_tensor[nz] - event_tensor[nz].mean()) / event_tensor[nz].std()
        for j in range(num_bins):
            event_input = event_tensor[:, j].unsqueeze(dim=1)
            membrane_potential = net(event_input, states)
            states = membrane_potential  # expect: TML005
            result = membrane_potential[0, 0].cpu().detach().numpy().reshape(height, width)
            img = Image.fromarray(normalize_image(result) * 255).convert("L")
            img.save(os.path.join(save_path, "result-idx{:04d}{:04d}.bmp".format(i, j)))
        print("\rProcessing: {}.".format(i * num_bins), end="", flush=True)
