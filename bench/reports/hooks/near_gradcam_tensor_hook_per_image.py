# Source: https://github.com/kamanberu88/change_pluL1/blob/cbddca37909d230ca5fb3ba2dbd8247f5ec97a7f/class_gradcam.py
# Report: audit: GradCam.__call__ walks the model's children per image and calls feature.register_hook(self.save_gradient) on the feature map tensor created in that iteration; the hook dies with the tensor, and self.feature / self.gradient are overwritten, not accumulated
# Shape: as the repository: a tensor hook on this image's activation inside the per-image loop, the last feature and gradient kept on self by overwrite, heat maps turned into CPU tensors before stacking
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F


class GradCam:
    def __init__(self, model, target_block="features"):
        self.model = model.eval()
        self.target_block = target_block
        self.feature = None
        self.gradient = None

    def save_gradient(self, grad):
        self.gradient = grad

    def _forward(self, image):
        out = image.unsqueeze(0)
        for name, module in self.model.named_children():
            if name == "classifier":
                out = out.flatten(1)
            out = module(out)
            if name == self.target_block:
                # hook on this tensor only: released together with the graph
                out.register_hook(self.save_gradient)
                self.feature = out
        return out

    def __call__(self, images):
        h, w = images.shape[-2:]
        heatmaps = []
        for i in range(images.size(0)):
            logits = self._forward(images[i])
            score, _ = torch.sigmoid(logits).max(dim=-1)
            self.model.zero_grad()
            score.backward()

            weight = self.gradient.mean(dim=(-1, -2), keepdim=True)
            cam = F.relu((weight * self.feature).sum(dim=1, keepdim=True)).detach()
            cam = F.interpolate(cam, size=(h, w), mode="bilinear", align_corners=False)[0, 0]
            cam = cam - cam.min()
            if cam.max() > 0:
                cam = cam / cam.max()
            heatmaps.append(cam.cpu())
        return torch.stack(heatmaps)


def overlay(image, cam, alpha=0.5):
    img = image.detach().cpu().permute(1, 2, 0).numpy()
    img = (img - img.min()) / max(img.max() - img.min(), 1e-8)
    heat = np.stack([cam.numpy(), np.zeros_like(cam.numpy()), 1.0 - cam.numpy()], axis=-1)
    return np.clip(alpha * heat + (1 - alpha) * img, 0.0, 1.0)


def explain_loader(model, loader, device="cuda", max_batches=10):
    cam = GradCam(model.to(device))
    panels = []
    for step, (images, _) in enumerate(loader):
        if step >= max_batches:
            break
        images = images.to(device)
        maps = cam(images)
        for image, heat in zip(images, maps):
            panels.append(overlay(image, heat))
    return panels
