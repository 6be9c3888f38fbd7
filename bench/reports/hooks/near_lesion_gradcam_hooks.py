# Source: https://github.com/Kilsi99/LesionDetectionAppDemo-/blob/047bc6b8642cdf2fae3f7b652749801da222457d/app/services/gradcam_service.py
# Report: skin-lesion demo (ResNet50 + Grad-CAM): the GradCAM wrapper, whose _register_hooks helper hooks layer4's last conv, is built once at import time and reused for every image
# Shape: forward/backward hooks registered once on the persistent classifier; each image only overwrites gradcam.activations / gradcam.gradients, and the CAM leaves as a CPU numpy array
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import models
from torchvision import transforms as T

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.target_layer = target_layer
        self.gradients = None
        self.activations = None
        self._register_hooks()

    def _register_hooks(self):
        def forward_hook(module, inputs, output):
            self.activations = output

        def backward_hook(module, grad_input, grad_output):
            self.gradients = grad_output[0]

        self.target_layer.register_forward_hook(forward_hook)
        self.target_layer.register_full_backward_hook(backward_hook)

    def generate(self, input_tensor, class_idx):
        self.model.zero_grad()
        output = self.model(input_tensor)
        output[:, class_idx].sum().backward()
        weights = torch.mean(self.gradients, dim=(2, 3), keepdim=True)
        cam = F.relu(torch.sum(weights * self.activations, dim=1))
        cam = cam - cam.min()
        return cam / (cam.max() + 1e-8)


cls_model = models.resnet50(num_classes=7)
cls_model.to(device).eval()
target_layer = cls_model.layer4[-1].conv3
gradcam = GradCAM(cls_model, target_layer)

img_transform = T.Compose([
    T.Resize((256, 256)),
    T.ToTensor(),
    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


def explain_images(images):
    overlays = []
    for image in images:
        img_tensor = img_transform(image).unsqueeze(0).to(device)
        with torch.no_grad():
            pred_class = cls_model(img_tensor).argmax(dim=1).item()
        cam = gradcam.generate(img_tensor, pred_class)
        cam = cam.detach().cpu().numpy()[0]
        overlays.append(np.uint8(255 * cam))
    return overlays
