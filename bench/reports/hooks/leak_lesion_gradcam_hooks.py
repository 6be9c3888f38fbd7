# Source: https://github.com/Kilsi99/LesionDetectionAppDemo-/blob/047bc6b8642cdf2fae3f7b652749801da222457d/app/services/gradcam_service.py
# Report: skin-lesion demo (ResNet50 + Grad-CAM) one edit away: the GradCAM wrapper is built per image inside the batch loop instead of once at import time
# Shape: each GradCAM() runs _register_hooks, adding two more hooks to the module-level classifier's layer with no handle kept; every closure pins its wrapper's GPU activations/gradients
# Expect: TML007 lines 30, 31
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

        self.target_layer.register_forward_hook(forward_hook)  # expect: TML007
        self.target_layer.register_full_backward_hook(backward_hook)  # expect: TML007

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
        gradcam = GradCAM(cls_model, target_layer)
        cam = gradcam.generate(img_tensor, pred_class)
        cam = cam.detach().cpu().numpy()[0]
        overlays.append(np.uint8(255 * cam))
    return overlays
