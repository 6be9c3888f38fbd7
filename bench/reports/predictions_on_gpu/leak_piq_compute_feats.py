# Source: https://github.com/photosynthesis-team/piq/pull/325
# Report: feature-based metrics (KID/FID, issue #214 "huge memory consumption in KID") kept the Inception features of every batch on the GPU while compute_feats looped over the loader; the PR moved each batch's features to the CPU before appending
# Shape: compute_feats is @torch.no_grad() (no graph), but each batch's flattened feature tensor is appended to total_feats while still on the device and only concatenated after the loop
# Expect: TML004 line 38
import torch
import torch.nn as nn


class InceptionV3(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone

    def forward(self, x):
        return [self.backbone(x)]


class BaseFeatureMetric(nn.Module):
    def __init__(self, backbone=None):
        super().__init__()
        self.backbone = backbone

    @torch.no_grad()
    def compute_feats(self, loader, feature_extractor=None, device="cuda"):
        if feature_extractor is None:
            feature_extractor = InceptionV3(self.backbone)
        feature_extractor.to(device)
        feature_extractor.eval()

        total_feats = []
        for batch in loader:
            images = batch["images"]
            N = images.shape[0]
            images = images.float().to(device)
            features = feature_extractor(images)
            assert len(features) == 1, \
                f"feature_encoder must return list with features from one layer. Got {len(features)}"
            total_feats.append(features[0].view(N, -1))  # expect: TML004

        return torch.cat(total_feats, dim=0)
