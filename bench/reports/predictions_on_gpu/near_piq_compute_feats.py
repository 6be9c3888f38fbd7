# Source: https://github.com/photosynthesis-team/piq/pull/325
# Report: feature-based metrics (KID/FID, issue #214 "huge memory consumption in KID") kept the Inception features of every batch on the GPU while compute_feats looped over the loader; the PR moved each batch's features to the CPU before appending
# Shape: the merged fix: each batch's features are moved to the CPU before the append, and the CUDA cache is emptied once after the loop
# Expect: near-miss: must be silent
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
            features = features[0].view(N, -1)
            features = features.cpu()
            total_feats.append(features)

        torch.cuda.empty_cache()
        return torch.cat(total_feats, dim=0)
