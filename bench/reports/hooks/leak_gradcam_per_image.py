# Source: https://github.com/yizt/Grad-CAM.pytorch/issues/51
# Report: Grad-CAM run over many images in a Python for loop: GPU memory grew with every image until CUDA OOM; answer: the hooks were never released (remove_handlers was not called).
# Shape: GradCAM.__init__ registers forward/backward hooks (which store feature/gradient on self) on the shared net and drops the handles; the batch script builds a new GradCAM per image.
# Expect: TML007 line 33; TML007 line 34
import os

import cv2
import numpy as np
import torch
from torchvision import models


class GradCAM:
    """Grad-CAM on one named layer; the network itself is not updated."""

    def __init__(self, net, layer_name):
        self.net = net
        self.layer_name = layer_name
        self.feature = None
        self.gradient = None
        self.net.eval()
        self._register_hook()

    def _get_features_hook(self, module, inputs, output):
        self.feature = output

    def _get_grads_hook(self, module, grad_input, grad_output):
        self.gradient = grad_output[0]

    def _register_hook(self):
        for name, module in self.net.named_modules():
            if name == self.layer_name:
                module.register_forward_hook(self._get_features_hook)  # expect: TML007
                module.register_full_backward_hook(self._get_grads_hook)  # expect: TML007

    def __call__(self, inputs, index=None):
        self.net.zero_grad()
        output = self.net(inputs)
        if index is None:
            index = int(output.argmax(dim=1).item())
        output[0, index].backward()
        gradient = self.gradient[0].cpu().numpy()
        feature = self.feature[0].detach().cpu().numpy()
        weight = gradient.mean(axis=(1, 2))
        cam = np.maximum((feature * weight[:, None, None]).sum(axis=0), 0)
        cam -= cam.min()
        cam /= cam.max() + 1e-8
        return cv2.resize(cam, (224, 224))


def run_folder(image_dir, out_dir, layer_name="layer4.2.conv3"):
    net = models.resnet50(weights="IMAGENET1K_V1").cuda()
    for fname in sorted(os.listdir(image_dir)):
        img = cv2.imread(os.path.join(image_dir, fname))[:, :, ::-1]
        img = np.float32(cv2.resize(img, (224, 224))) / 255
        x = torch.from_numpy(img.transpose(2, 0, 1).copy())[None].cuda()
        x.requires_grad_(True)
        grad_cam = GradCAM(net, layer_name)
        mask = grad_cam(x)
        heatmap = cv2.applyColorMap(np.uint8(255 * mask), cv2.COLORMAP_JET)
        cv2.imwrite(os.path.join(out_dir, fname), heatmap)
