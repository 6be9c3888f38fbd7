# Source: https://github.com/myscience/open-genie/blob/main/genie/module/loss.py
# Report: open-genie's PerceptualLoss records VGG16 activations with a RecordingProbe forward hook; the hooks are registered once in __init__ (a temporary naming probe is registered and removed there too) and the probe is cleaned after every read
# Shape: register_forward_hook only runs in __init__ (handles kept, removed in __del__); forward only runs the frozen VGG and reads/clears the probe's per-call buffer
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn as nn
from torch.nn.functional import mse_loss
from torchvision.models import get_model


class RecordingProbe:
    def __init__(self):
        self._data = defaultdict(list)

    @property
    def features(self):
        return {k: torch.cat(v) for k, v in self._data.items()}

    def __call__(self, module, inp, out):
        name = module._get_name().lower()
        feat = out.clone().detach().flatten(start_dim=1).contiguous()
        self._data[name].append(feat)

    def clean(self):
        self._data.clear()


def pick_frames(video, frames_idxs):
    b, c, t, h, w = video.shape
    batch_idx = torch.arange(b, device=video.device).repeat_interleave(len(frames_idxs) // b)
    return video[batch_idx, :, frames_idxs]


class PerceptualLoss(nn.Module):
    def __init__(self, model_name="vgg16", num_frames=4,
                 feat_layers=("features.6", "features.13", "features.18", "features.25")):
        super().__init__()
        self.num_frames = num_frames
        self.percept_model = get_model(model_name, weights="DEFAULT")
        self.percept_model.eval()
        for p in self.percept_model.parameters():
            p.requires_grad = False

        self.probe = RecordingProbe()
        self.hook_handles = [
            module.register_forward_hook(self.probe)
            for name, module in self.percept_model.named_modules()
            if name in feat_layers
        ]
        assert len(self.hook_handles) > 0, "no valid layers in the perceptual model"

    def forward(self, rec_video, inp_video):
        b, c, t, h, w = inp_video.shape
        frames_idxs = torch.cat([
            torch.randperm(t, device=inp_video.device)[:self.num_frames] for _ in range(b)
        ])
        fake_frames = pick_frames(rec_video, frames_idxs)
        real_frames = pick_frames(inp_video, frames_idxs)

        _ = self.percept_model(fake_frames)
        fake_feat = self.probe.features
        self.probe.clean()

        _ = self.percept_model(real_frames)
        real_feat = self.probe.features
        self.probe.clean()

        return torch.stack([mse_loss(fake_feat[k], real_feat[k]) for k in fake_feat]).mean()

    def __del__(self):
        for handle in self.hook_handles:
            handle.remove()
