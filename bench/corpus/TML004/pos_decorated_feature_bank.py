# Modelled on: https://github.com/google-research/runtime-error-prediction/pull/64
# Report: evaluation created too large an on-device tensor; the fix moved the computation to the CPU.
import torch


class FeatureBank:
    def __init__(self):
        self.features = []
        self.targets = []

    @torch.no_grad()
    def build(self, encoder, loader):
        encoder.eval()
        for images, targets in loader:
            feats = torch.nn.functional.normalize(encoder(images.cuda()), dim=1)
            self.features.append(feats)  # expect: TML004
            self.targets.append(targets)
        self.features = torch.cat(self.features)
        self.targets = torch.cat(self.targets)
