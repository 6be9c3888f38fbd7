# Source: https://github.com/sunlabuiuc/PyHealth/blob/7c73210e34960e17acf223f8222f8417e66b44b4/pyhealth/interpret/methods/gradcam.py
# Report: PyHealth's GradCAM.attribute() registers its forward hook per call and removes it in finally; this variant drops the try/finally and the handle
# Shape: attribute() is called once per test batch and registers a new forward hook on the persistent target layer each time, never removed: closures (and their dicts of activations) pile up
# Expect: TML007 line 30
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class GradCAM:
    def __init__(self, model: nn.Module, target_layer: nn.Module, input_key: str = "image"):
        self.model = model
        self.target_layer = target_layer
        self.input_key = input_key
        self.last_target_class: Optional[torch.Tensor] = None

    def attribute(self, normalize: bool = True, **data) -> Dict[str, torch.Tensor]:
        image = data[self.input_key]
        activations: dict = {}
        gradients: dict = {}

        def forward_hook(_, __, output):
            if not output.requires_grad:
                raise RuntimeError("Grad-CAM needs gradients; do not call it under no_grad")
            activations["value"] = output
            output.register_hook(lambda g: gradients.__setitem__("value", g))

        self.target_layer.register_forward_hook(forward_hook)  # expect: TML007
        self.model.zero_grad()
        scores = self.model(**data)["logit"]
        target = scores.argmax(dim=-1)
        picked = scores.gather(1, target.unsqueeze(1)).squeeze(1)
        self.model.zero_grad()
        picked.sum().backward()

        weights = gradients["value"].mean(dim=(2, 3), keepdim=True)
        cams = torch.relu((weights * activations["value"]).sum(dim=1))
        cams = F.interpolate(cams.unsqueeze(1), size=image.shape[-2:],
                             mode="bilinear", align_corners=False).squeeze(1)
        if normalize:
            flat = cams.flatten(1)
            lo = flat.min(1).values.view(-1, 1, 1)
            hi = flat.max(1).values.view(-1, 1, 1)
            cams = (cams - lo) / (hi - lo).clamp_min(1e-8)
        self.last_target_class = target.detach().cpu()
        return {self.input_key: cams}


class XrayClassifier(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(32, n_classes)

    def forward(self, image, disease=None):
        feats = self.body(image)
        return {"logit": self.head(feats.mean(dim=(2, 3)))}


def explain_test_set(model, test_loader, device):
    model.to(device).eval()
    gradcam = GradCAM(model, target_layer=model.body[2])
    all_cams, all_targets = [], []
    for batch in test_loader:
        batch = {k: v.to(device) for k, v in batch.items()}
        cams = gradcam.attribute(**batch)["image"]
        all_cams.append(cams.detach().cpu())
        all_targets.append(gradcam.last_target_class)
    return torch.cat(all_cams), torch.cat(all_targets)
