# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/112
# Report: GradCAM++ used inside a for loop to save every CAM: RAM kept piling up each iteration until the process was killed; the reporter found the CAM object must be created only once.
# Shape: the CAM constructor builds an ActivationsAndGradients helper whose constructor registers hooks on the shared layer (handles dropped); hooks append every activation to lists that only the newest helper ever resets.
# Expect: TML007 line 18; TML007 line 19
import numpy as np
import torch
import torch.nn.functional as F


class ActivationsAndGradients:
    """Collects the target layer's activations and gradients through hooks."""

    def __init__(self, model, target_layer, reshape_transform=None):
        self.model = model
        self.reshape_transform = reshape_transform
        self.gradients = []
        self.activations = []
        target_layer.register_forward_hook(self.save_activation)  # expect: TML007
        target_layer.register_full_backward_hook(self.save_gradient)  # expect: TML007

    def save_activation(self, module, inputs, output):
        if self.reshape_transform is not None:
            output = self.reshape_transform(output)
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


class GradCAMPlusPlus:
    def __init__(self, model, target_layer, use_cuda=False, reshape_transform=None):
        self.model = model.eval()
        self.device = "cuda" if use_cuda else "cpu"
        self.model.to(self.device)
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layer, reshape_transform)

    def __call__(self, input_tensor, target_category=None):
        input_tensor = input_tensor.to(self.device)
        output = self.activations_and_grads(input_tensor)
        if target_category is None:
            target_category = output.argmax(dim=1)
        self.model.zero_grad()
        output.gather(1, target_category[:, None]).sum().backward()
        acts = self.activations_and_grads.activations[-1]
        grads = self.activations_and_grads.gradients[-1]
        grads_power_2, grads_power_3 = grads ** 2, grads ** 3
        sum_acts = acts.sum(dim=(2, 3), keepdim=True)
        aij = grads_power_2 / (2 * grads_power_2 + sum_acts * grads_power_3 + 1e-7)
        weights = (aij * F.relu(grads)).sum(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * acts).sum(dim=1))
        cam = cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7)
        return cam.numpy()


def save_all_cams(model, loader, out_path):
    all_cams = []
    for images, _ in loader:
        cam = GradCAMPlusPlus(model=model, target_layer=model.layer4[-1], use_cuda=True)
        all_cams.append(cam(input_tensor=images))
    np.save(out_path, np.concatenate(all_cams))
