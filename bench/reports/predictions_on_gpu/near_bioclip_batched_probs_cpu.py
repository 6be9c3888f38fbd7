# Source: https://github.com/Imageomics/pybioclip/issues/145
# Report: TreeOfLifeClassifier.predict kept every batch's probability tensors on the GPU until the whole dataset was done, so VRAM grew with dataset size and OOMed at ~65% of 10,000+ images; the fix offloads each batch with tensor.detach().cpu().
# Shape: fixed variant: probabilities are still stored per image key in a results dict, but each batch is moved off the GPU (`probs = probs.detach().cpu()`) before being sliced into the dict.
# Expect: near-miss: must be silent
from typing import Dict, List

import PIL.Image
import torch
import torch.nn.functional as F


class BaseClassifier:
    def __init__(self, model, preprocess, txt_features, device="cuda"):
        self.model = model.to(device).eval()
        self.preprocess = preprocess
        self.txt_features = txt_features.to(device)
        self.device = device

    @torch.no_grad()
    def create_image_features(self, images: List[PIL.Image.Image]) -> torch.Tensor:
        batch = torch.stack([self.preprocess(img).to(self.device) for img in images])
        return F.normalize(self.model.encode_image(batch), dim=-1)

    @torch.no_grad()
    def create_probabilities(self, img_features, txt_features):
        logits = self.model.logit_scale.exp() * img_features @ txt_features
        return F.softmax(logits, dim=1)

    @torch.no_grad()
    def create_probabilities_for_images(self, images, keys,
                                        batch_size: int = 32) -> Dict[str, torch.Tensor]:
        result = {}
        for start in range(0, len(images), batch_size):
            batch_imgs = images[start:start + batch_size]
            img_features = self.create_image_features(batch_imgs)
            probs = self.create_probabilities(img_features, self.txt_features)
            probs = probs.detach().cpu()
            for i, key in enumerate(keys[start:start + batch_size]):
                result[key] = probs[i]
        return result

    def predict(self, image_paths: List[str], k: int = 5):
        images = [PIL.Image.open(p).convert("RGB") for p in image_paths]
        probs = self.create_probabilities_for_images(images, image_paths)
        out = []
        for path in image_paths:
            top = probs[path].topk(k)
            out.append({"file_name": path,
                        "scores": [(int(i), float(v)) for i, v in zip(top.indices, top.values)]})
        return out
