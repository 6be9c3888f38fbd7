# Source: https://github.com/XinranMiao/source_selection/blob/4db0a054d176e64c2091c616a6386bc7fd8e9e23/experiment_camelyon/main_experiment/activations.py
# Report: audit: activations() registers a forward hook on every requested layer each time it is called and only `del`s the handles (never .remove()), so every call leaves another SaveOutput hooked on the ResNet; called per Camelyon17 patch batch, each forward appends to all earlier collectors
# Shape: fixed: the same per-call hooks on layer3/layer4, but every handle is .remove()d in a finally block before the helper returns, so each batch leaves no hook behind
# Expect: near-miss: must be silent
import numpy as np
import pandas as pd
import torch
from sklearn.decomposition import PCA
from torch.utils.data import DataLoader
from torchvision import models


class SaveOutput:
    def __init__(self):
        self.outputs = []

    def __call__(self, module, module_in, module_out):
        self.outputs.append(module_out)

    def clear(self):
        self.outputs = []


def layer_activations(model, layers, x, device):
    """Return the activations of `layers` for the batch x."""
    save_output = SaveOutput()
    hook_handles = []
    for layer in layers:
        handle = layer.register_forward_hook(save_output)
        hook_handles.append(handle)

    try:
        with torch.no_grad():
            model(x.to(device))
        acts = list(save_output.outputs)
    finally:
        for handle in hook_handles:
            handle.remove()
    return acts


def patch_features(dataset, indices, device="cuda", batch_size=64, n_components=50):
    backbone = models.resnet18(weights="IMAGENET1K_V1").to(device).eval()
    layers = [backbone.layer3, backbone.layer4]
    subset = torch.utils.data.Subset(dataset, indices)
    loader = DataLoader(subset, batch_size=batch_size, num_workers=4)

    shallow, deep = [], []
    for batch in loader:
        images = batch["image"].permute(0, 3, 1, 2).float() / 255.0
        acts = layer_activations(backbone, layers, images, device)
        shallow.append(acts[0].mean(dim=(2, 3)).cpu().numpy())
        deep.append(acts[1].mean(dim=(2, 3)).cpu().numpy())

    tables = {}
    for name, chunks in (("shallow", shallow), ("deep", deep)):
        feats = np.concatenate(chunks, axis=0)
        reduced = PCA(n_components=n_components).fit_transform(feats)
        tables[name] = pd.DataFrame(reduced, index=indices)
    return tables


if __name__ == "__main__":
    from dataset import camelyonDataset

    meta = pd.read_csv("./data/camelyon17_v1.0/metadata.csv", index_col=0)
    ds = camelyonDataset(metadata=meta, base_dir="./data/camelyon17_v1.0/patches")
    sample = pd.read_csv("./processed_data/df_10k.csv")["indices"].tolist()
    out = patch_features(ds, sample)
    out["deep"].to_csv("./processed_data/resnet_pca_50d_features_10k.csv")
    out["shallow"].to_csv("./processed_data/shallow_resnet_pca_50d_features_10k.csv")
