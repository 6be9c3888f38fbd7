# Source: https://github.com/kamanberu88/change_pluL1/blob/cbddca37909d230ca5fb3ba2dbd8247f5ec97a7f/class_gradcam.py
# Report: audit: GradCam.__call__ registers its gradient hook on the per-image feature tensor (it dies with the tensor); this is the variant that avoided, module hooks on the persistent feature block registered again for every image and never removed
# Shape: __call__ registers a forward hook and a full backward hook on self.model.features inside the per-image loop without keeping the handles, so the block's hook dicts grow by two bound methods per image and every later forward/backward runs all of them
# Expect: TML007 line 31; TML007 line 32
import numpy as np
import torch
import torch.nn.functional as F


class GradCam:
    def __init__(self, model, target_block="features"):
        self.model = model.eval()
        self.block = getattr(model, target_block)
        self.feature = None
        self.gradient = None

    def save_feature(self, module, inputs, output):
        self.feature = output

    def save_gradient(self, module, grad_input, grad_output):
        self.gradient = grad_output[0]

    def _forward(self, image):
        return self.model(image.unsqueeze(0))

    def __call__(self, images):
        h, w = images.shape[-2:]
        heatmaps = []
        for i in range(images.size(0)):
            # handles are dropped: each image adds two more hooks to the block
            self.block.register_forward_hook(self.save_feature)  # expect: TML007
            self.block.register_full_backward_hook(self.save_gradient)  # expect: TML007
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
