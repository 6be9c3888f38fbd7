# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/71
# Report: the fix keeps only the current image's activation and gradient (reset per call) as detached CPU copies.
# Shape: same hook-owning helper, each hook overwrites its attribute with a detached CPU copy.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class ActivationsAndGradients:
    def __init__(self, model: nn.Module, target_layer: nn.Module):
        self.model = model
        self.activation = None
        self.gradient = None
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inputs, output):
        self.activation = output.detach().cpu()

    def save_gradient(self, module, grad_input, grad_output):
        self.gradient = grad_output[0].detach().cpu()

    def __call__(self, x):
        return self.model(x)


def cam_maps(model, target_layer, images, target_class):
    extractor = ActivationsAndGradients(model, target_layer)
    maps = []
    for image in images:
        scores = extractor(image.unsqueeze(0).cuda())
        model.zero_grad()
        scores[0, target_class].backward()
        weights = extractor.gradient.mean(dim=(2, 3), keepdim=True)
        maps.append(torch.relu((weights * extractor.activation).sum(dim=1)))
    return maps
