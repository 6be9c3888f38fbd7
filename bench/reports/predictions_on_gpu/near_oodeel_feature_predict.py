# Source: https://github.com/deel-ai/oodeel/pull/109
# Report: TorchFeatureExtractor.predict ran the model with autograd on and grew feature/logit tensors on the GPU with torch.cat inside the batch loop (O(N^2) copies, whole dataset in VRAM)
# Shape: fixed version: forward under torch.no_grad(), each batch moved to host with .cpu() into per-layer lists, one torch.cat after the loop
# Expect: near-miss: must be silent
from typing import Callable, List, Optional

import torch
from torch import nn
from tqdm import tqdm


class TorchFeatureExtractor:
    def __init__(self, model: nn.Module, feature_layers_id: List[str], head_layer_id: str = "fc"):
        self.model = model.eval()
        self.feature_layers_id = list(feature_layers_id)
        self.head_layer_id = head_layer_id
        self._device = next(model.parameters()).device
        self._features = {}
        modules = dict(self.model.named_modules())
        for layer_id in self._hook_layers_id:
            modules[layer_id].register_forward_hook(self._get_features_hook(layer_id))

    @property
    def _hook_layers_id(self):
        return self.feature_layers_id + [self.head_layer_id]

    def _get_features_hook(self, layer_id: str) -> Callable:
        def hook(_, __, output):
            self._features[layer_id] = output

        return hook

    def predict_tensor(self, x: torch.Tensor, postproc_fns: Optional[List[Callable]] = None):
        if x.device != self._device:
            x = x.to(self._device)
        with torch.no_grad():
            _ = self.model(x)
            feats = [self._features[lid] for lid in self._hook_layers_id]
            logits = feats.pop()
            if postproc_fns is not None:
                feats = [fn(f) for f, fn in zip(feats, postproc_fns)]
        return feats, logits

    def predict(self, dataset, postproc_fns=None, verbose: bool = False):
        features_per_layer = [[] for _ in self.feature_layers_id]
        logits_list = []
        labels_list = []
        for elem in tqdm(dataset, desc="Predicting", disable=not verbose):
            tensor, lbl = elem
            feats_batch, logits_batch = self.predict_tensor(tensor, postproc_fns)
            for i, f in enumerate(feats_batch):
                features_per_layer[i].append(f.cpu())
            logits_list.append(logits_batch.cpu())
            labels_list.append(lbl)
        features = [torch.cat(lst, dim=0) for lst in features_per_layer]
        info = {"labels": torch.cat(labels_list, dim=0), "logits": torch.cat(logits_list, dim=0)}
        return features, info
