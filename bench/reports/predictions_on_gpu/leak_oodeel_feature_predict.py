# Source: https://github.com/deel-ai/oodeel/pull/109
# Report: TorchFeatureExtractor.predict ran the model with autograd on and grew feature/logit tensors on the GPU with torch.cat inside the batch loop (O(N^2) copies, whole dataset in VRAM)
# Shape: hook-filled feature dict read by predict_tensor (forward without no_grad), then predict re-binds per-layer accumulators with torch.cat([acc, f]) every batch
# Expect: TML008 line 54; TML008 line 55; TML003 line 37
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

    def predict_tensor(self, x: torch.Tensor, postproc_fns: Optional[List[Callable]] = None,
                       detach: bool = True):
        if x.device != self._device:
            x = x.to(self._device)
        _ = self.model(x)  # expect: TML003
        feats = [self._features[lid] for lid in self._hook_layers_id]
        if detach:
            feats = [f.detach() for f in feats]
        logits = feats.pop()
        if postproc_fns is not None:
            feats = [fn(f) for f, fn in zip(feats, postproc_fns)]
        return feats, logits

    def predict(self, dataset, postproc_fns=None, detach: bool = True, verbose: bool = False):
        features = [None for _ in self.feature_layers_id]
        logits = None
        labels = []
        for elem in tqdm(dataset, desc="Predicting", disable=not verbose):
            tensor, lbl = elem
            features_batch, logits_batch = self.predict_tensor(tensor, postproc_fns, detach=detach)
            for i, f in enumerate(features_batch):
                features[i] = f if features[i] is None else torch.cat([features[i], f], dim=0)  # expect: TML008
            logits = logits_batch if logits is None else torch.cat([logits, logits_batch], dim=0)  # expect: TML008
            labels.append(lbl)
        info = {"labels": torch.cat(labels), "logits": logits}
        return features, info
