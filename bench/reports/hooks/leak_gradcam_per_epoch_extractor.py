# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/117
# Report: a cam_extractor() helper that builds a GradCAM++ object on the network every epoch of the training loop made host memory grow epoch after epoch until the job was killed
# Shape: the saliency helper constructs a new mapper per call; the recorder's constructor registers a forward and a backward hook on the persistent target layer and drops the handles, so hooks (and what they capture) accumulate
# Expect: TML007 line 16; TML007 line 17
import cv2
import numpy as np
import torch
import torch.nn.functional as F


class FeatureGradRecorder:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = []
        self.gradients = []
        target_layer.register_forward_hook(self._save_activation)  # expect: TML007
        target_layer.register_full_backward_hook(self._save_gradient)  # expect: TML007

    def _save_activation(self, module, inp, out):
        self.activations.append(out)

    def _save_gradient(self, module, grad_in, grad_out):
        self.gradients = [grad_out[0]] + self.gradients

    def __call__(self, x):
        self.activations, self.gradients = [], []
        return self.model(x)


class SaliencyMapper:
    def __init__(self, model, target_layer, device):
        self.device = device
        self.recorder = FeatureGradRecorder(model, target_layer)

    def __call__(self, x, category):
        logits = self.recorder(x.to(self.device))
        logits[:, category].sum().backward()
        acts = self.recorder.activations[-1].detach()
        grads = self.recorder.gradients[0].detach()
        weights = F.relu(grads).mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * acts).sum(dim=1))
        cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)
        return cam.cpu().numpy()


def cam_extractor(network, input_tensor, rgb_img, device):
    mapper = SaliencyMapper(network, network.lastact[-1], device)
    heat = mapper(input_tensor, category=3)[0]
    heat = cv2.resize(heat, rgb_img.shape[1::-1])
    overlay = 0.5 * rgb_img + 0.5 * cv2.applyColorMap(np.uint8(255 * heat), cv2.COLORMAP_JET) / 255
    cv2.imwrite("cam.jpg", np.uint8(255 * overlay))
    return overlay


def train(network, loader, probe_tensor, probe_rgb, optimizer, epochs, device):
    for epoch in range(epochs):
        network.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(network(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
        cam_extractor(network, probe_tensor, probe_rgb, device)
