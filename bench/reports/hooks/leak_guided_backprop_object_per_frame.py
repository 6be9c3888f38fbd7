# Source: https://github.com/utkuozbulak/pytorch-cnn-visualizations/issues/53
# Report: running guided backprop over the frames of a video on the GPU ran out of memory; the register_backward/forward_hook calls were found to consume the memory as more images were read.
# Shape: the hooks are registered in the constructor of a helper object that is built once per frame on the same persistent model; no handle is ever removed.
# Expect: TML007 line 47
import torch
import torch.nn as nn
from torchvision import models


class GuidedBackprop:
    def __init__(self, model: nn.Module):
        self.model = model
        self.forward_relu_outputs = []
        self.gradients = None
        self.model.eval()
        first_layer = self.model.features[0]
        first_layer.register_full_backward_hook(self._keep_input_gradient)
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
    maps = []
    for frame in frames:
        guided = GuidedBackprop(model)  # expect: TML007
        maps.append(guided.generate(frame.unsqueeze(0).cuda(), target_class))
    return maps
