# Source: https://github.com/microsoft/Biodiversity/pull/662
# Report: batch_image_classification() of the wildlife classifiers ran the forward pass without no_grad and kept every batch's logits in total_logits on the GPU until one final torch.cat(...).cpu(); RAM/VRAM grew by hundreds of GB over ~3000 images
# Shape: classifier method loops over a loader, calls self.model(...) with grad enabled, appends the graph-attached CUDA logits to a list built before the loop
# Expect: TML001 line 45; TML003 line 44
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class BaseClassifier(nn.Module):
    """Wraps a timm / torchvision backbone for camera-trap species classification."""

    def __init__(self, backbone: nn.Module, class_names, device="cuda", transform=None):
        super().__init__()
        self.model = backbone.to(device)
        self.class_names = dict(enumerate(class_names))
        self.device = device
        self.transform = transform

    def results_generation(self, logits: torch.Tensor, img_ids, id_strip=None):
        probs = torch.softmax(logits, dim=1).numpy()
        results = []
        for i, img_id in enumerate(img_ids):
            top = int(np.argmax(probs[i]))
            results.append({
                "img_id": img_id.strip(id_strip) if id_strip else img_id,
                "prediction": self.class_names[top],
                "class_id": top,
                "confidence": float(probs[i][top]),
            })
        return results

    def batch_image_classification(self, data_path=None, det_results=None, id_strip=None,
                                   dataset_cls=None, batch_size=32):
        self.model.eval()
        dataset = dataset_cls(data_path, det_results, transform=self.transform)
        loader = DataLoader(dataset, batch_size=batch_size, shuffle=False, num_workers=4)

        total_logits = []
        total_paths = []
        for imgs, paths in loader:
            imgs = imgs.to(self.device)
            logits = self.model(imgs)  # expect: TML003
            total_logits.append(logits)  # expect: TML001
            total_paths.extend(paths)

        total_logits = torch.cat(total_logits).cpu()
        return self.results_generation(total_logits, total_paths, id_strip=id_strip)
