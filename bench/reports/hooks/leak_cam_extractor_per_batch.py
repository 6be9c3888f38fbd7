# Source: https://github.com/frgfm/torch-cam/issues/197
# Report: A CAM extractor that is deleted or re-created does not take its hooks off the model; they stay registered (keeping the extractor and the activations it saved) until remove_hooks() is called.
# Shape: the extractor's constructor registers forward hooks that store every activation in self.hook_a and keeps the handles; the audit loop builds a fresh extractor per batch and never calls remove_hooks().
# Expect: TML007 line 23
from typing import Dict, List

import torch
import torch.nn.functional as F
from torch import nn


class LayerCAMExtractor:
    """Minimal LayerCAM: forward hooks grab activations, tensor hooks grab their grads."""

    def __init__(self, model: nn.Module, target_layers: List[str]):
        self.model = model
        self.target_layers = target_layers
        self.hook_a: Dict[str, torch.Tensor] = {}
        self.hook_g: Dict[str, torch.Tensor] = {}
        self.hook_handles = []
        modules = dict(model.named_modules())
        for name in target_layers:
            handle = modules[name].register_forward_hook(self._make_hook(name))  # expect: TML007
            self.hook_handles.append(handle)

    def _make_hook(self, name):
        def _hook(module, inputs, output):
            self.hook_a[name] = output
            output.register_hook(lambda grad: self.hook_g.__setitem__(name, grad))

        return _hook

    def remove_hooks(self):
        for handle in self.hook_handles:
            handle.remove()
        self.hook_handles.clear()

    def compute_maps(self) -> List[torch.Tensor]:
        maps = []
        for name in self.target_layers:
            act, grad = self.hook_a[name], self.hook_g[name]
            cam = F.relu((F.relu(grad) * act).sum(dim=1))
            maps.append(cam.detach())
        return maps


def audit_predictions(model, loader, device, target_layers=("layer3", "layer4")):
    model.eval()
    saliency = []
    for images, _ in loader:
        images = images.to(device)
        extractor = LayerCAMExtractor(model, list(target_layers))
        scores = model(images)
        pred = scores.argmax(dim=1)
        model.zero_grad()
        scores.gather(1, pred[:, None]).sum().backward()
        maps = extractor.compute_maps()
        saliency.append([m.cpu() for m in maps])
    return saliency
