# Source: https://github.com/utkuozbulak/pytorch-cnn-visualizations/issues/53
# Report: the answer points at the hooks and the retained gradients; the fix builds the guided-backprop object once and reuses it for every frame.
# Shape: the same hook-registering helper, constructed once before the frame loop.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torchvision import models


class GuidedBackprop:
    def __init__(self, model: nn.Module):
        self.model = model
        self.forward_relu_outputs = []
        self.gradients = None
        self.model.eval()
        self.model.features[0].register_full_backward_hook(self._keep_input_gradient)
        for module in self.model.features:
            if isinstance(module, nn.ReLU):
                module.register_forward_hook(self._remember_relu_output)
                module.register_full_backward_hook(self._clamp_relu_gradient)

    def _keep_input_gradient(self, module, grad_in, grad_out):
        self.gradients = grad_in[0]

    def _remember_relu_output(self, module, inputs, output):
        self.forward_relu_outputs.append(output)

    def _clamp_relu_gradient(self, module, grad_in, grad_out):
        forward_output = self.forward_relu_outputs.pop()
        return (torch.clamp(grad_in[0], min=0.0) * (forward_output > 0).float(),)

    def generate(self, image, target_class):
        image = image.requires_grad_()
        scores = self.model(image)
        one_hot = torch.zeros_like(scores)
        one_hot[0, target_class] = 1
        self.model.zero_grad()
        scores.backward(gradient=one_hot)
        return self.gradients[0].cpu()


def saliency_for_video(frames, target_class):
    model = models.vgg11(weights=None).cuda()
    guided = GuidedBackprop(model)
    maps = []
    for frame in frames:
        maps.append(guided.generate(frame.unsqueeze(0).cuda(), target_class))
    return maps
