# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/71
# Report: activations and gradients captured by the hooks were accumulated in lists on the CUDA device; the suggestion was to keep output.cpu().data.numpy() or to reset the lists for each image.
# Shape: a hook method of a helper object appends the graph-carrying layer output it sees to a list attribute that is never reset, while the caller loops over images.
# Expect: TML001 line 18
import torch
import torch.nn as nn


class ActivationsAndGradients:
    def __init__(self, model: nn.Module, target_layer: nn.Module):
        self.model = model
        self.activations = []
        self.gradients = []
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inputs, output):
        self.activations.append(output)  # expect: TML001

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0]] + self.gradients

    def __call__(self, x):
        return self.model(x)


def cam_maps(model, target_layer, images, target_class):
    extractor = ActivationsAndGradients(model, target_layer)
    maps = []
    for image in images:
        scores = extractor(image.unsqueeze(0).cuda())
        model.zero_grad()
        scores[0, target_class].backward()
        weights = extractor.gradients[0].mean(dim=(2, 3), keepdim=True)
        cam = torch.relu((weights * extractor.activations[-1]).sum(dim=1))
        maps.append(cam.detach().cpu())
    return maps
