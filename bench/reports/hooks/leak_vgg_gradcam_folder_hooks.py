# Source: https://github.com/yoshi-gyu/grad_cam3/blob/236af3b1849caf55f7a065d379667ebe72c47b7b/grad_cam.py
# Report: audit of a VGG19 Grad-CAM helper: GradCam keeps every forward/backward hook handle it registers on model.features[-1] in self.hooks and predict() calls clear_hook() after reading the maps; this is the variant it avoided, where a folder-explain loop hooks the one loaded model for each image and never removes the handles
# Shape: batch Grad-CAM script over an image folder; each image gets a fresh buffer object whose bound save methods are hooked (forward + full backward) onto the shared last feature layer inside the loop, so hooks and their buffers pile up image after image
# Expect: TML007 line 56; TML007 line 57
import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from torchvision import models, transforms

IMAGE_SIZE = (224, 224)
preprocess = transforms.Compose([
    transforms.Resize(IMAGE_SIZE),
    transforms.ToTensor(),
    transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
])


class CamBuffers:
    def __init__(self):
        self.feature_map = None
        self.feature_grad = None

    def save_map(self, module, inputs, output):
        self.feature_map = output.detach()

    def save_grad(self, module, grad_input, grad_output):
        self.feature_grad = grad_output[0].detach()


def cam_from_buffers(buffers):
    weights = buffers.feature_grad.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * buffers.feature_map).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=IMAGE_SIZE, mode="bilinear", align_corners=False)[0, 0]
    cam = (cam - cam.min()) / (cam.max() - cam.min() + 1e-8)
    return cam.cpu().numpy()


def overlay(image, cam):
    rgb = np.asarray(image.resize(IMAGE_SIZE), dtype=np.float32) / 255.0
    heat = np.stack([cam, np.zeros_like(cam), 1.0 - cam], axis=-1)
    return Image.fromarray(np.uint8(255 * (0.5 * rgb + 0.5 * heat)))


def explain_folder(image_dir, out_dir, device="cuda"):
    model = models.vgg19(weights=models.VGG19_Weights.IMAGENET1K_V1).to(device).eval()
    feature_layer = model.features[-1]
    os.makedirs(out_dir, exist_ok=True)
    results = {}
    for fname in sorted(os.listdir(image_dir)):
        image = Image.open(os.path.join(image_dir, fname)).convert("RGB")
        x = preprocess(image).unsqueeze(0).to(device)
        buffers = CamBuffers()
        feature_layer.register_forward_hook(buffers.save_map)  # expect: TML007
        feature_layer.register_full_backward_hook(buffers.save_grad)  # expect: TML007
        model.zero_grad()
        logits = model(x)
        target = logits.argmax(1).item()
        one_hot = torch.zeros_like(logits)
        one_hot[0, target] = 1.0
        logits.backward(gradient=one_hot)
        cam = cam_from_buffers(buffers)
        overlay(image, cam).save(os.path.join(out_dir, f"cam_{fname}"))
        results[fname] = {"class": target, "prob": logits.softmax(1)[0, target].item()}
    return results


if __name__ == "__main__":
    print(explain_folder("images", "images/cams"))
