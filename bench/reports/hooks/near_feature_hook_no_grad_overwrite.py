# Source: https://deepwiki.com/deeplearning-wisc/react/7.4-feature-extraction-methods
# Report: the page documents feature extraction with a forward-hook closure that stores the layer output, detached, in an activation dict keyed by layer name.
# Shape: one hook registered before the loop and removed after it; the closure overwrites a single slot with a detached CPU copy, and extraction runs under no_grad.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torchvision import models


def extract_pooled_features(loader):
    model = models.resnet18(weights=None).cuda().eval()
    latest = {}

    def keep_pooled(module, inputs, output):
        latest["pooled"] = output.detach().flatten(1).cpu()

    handle = model.avgpool.register_forward_hook(keep_pooled)
    features = []
    with torch.no_grad():
        for images, _ in loader:
            model(images.cuda())
            features.append(latest["pooled"].numpy())
    handle.remove()
    return features
