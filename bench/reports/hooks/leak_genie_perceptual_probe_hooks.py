# Source: https://github.com/myscience/open-genie/blob/main/genie/module/loss.py
# Report: variant of open-genie's PerceptualLoss that attaches the RecordingProbe hooks lazily inside forward instead of once in __init__, so every loss call adds another hook on each chosen VGG16 layer
# Shape: register_forward_hook runs in forward (called once per training step) on the persistent self.percept_model and the handle is dropped: hooks pile up, each VGG pass records every layer k times
# Expect: TML007 line 60
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
        self.feat_layers = set(feat_layers)

    def forward(self, rec_video, inp_video):
        b, c, t, h, w = inp_video.shape
        frames_idxs = torch.cat([
            torch.randperm(t, device=inp_video.device)[:self.num_frames] for _ in range(b)
        ])
        fake_frames = pick_frames(rec_video, frames_idxs)
        real_frames = pick_frames(inp_video, frames_idxs)

        # attach the recording probe at the requested layers
        for name, module in self.percept_model.named_modules():
            if name in self.feat_layers:
                module.register_forward_hook(self.probe)  # expect: TML007

        _ = self.percept_model(fake_frames)
        fake_feat = self.probe.features
        self.probe.clean()

        _ = self.percept_model(real_frames)
        real_feat = self.probe.features
        self.probe.clean()

        return torch.stack([mse_loss(fake_feat[k], real_feat[k]) for k in fake_feat]).mean()
