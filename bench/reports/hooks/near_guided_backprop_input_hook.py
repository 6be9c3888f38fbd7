# Source: https://github.com/utkuozbulak/pytorch-cnn-visualizations/pull/68
# Report: review of the guided-backprop fix: hook_input() registers a gradient hook on the caller's input_image on every generate_gradients() call, so repeated calls on the same image stack up hooks
# Shape: as the reviewer suggested, each call hooks a fresh copy of the image made inside the call, so the hook dies with that copy
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
from torchvision import models


class GuidedBackprop:
    def __init__(self, model: nn.Module):
        self.model = model
        self.gradients = None
        self.forward_relu_outputs = []
        self.model.eval()
        self._update_relus()

    def _update_relus(self):
        def relu_backward_hook(module, grad_in, grad_out):
            last = self.forward_relu_outputs.pop()
            mask = (last > 0).float()
            return (mask * torch.clamp(grad_in[0], min=0.0),)

        def relu_forward_hook(module, ten_in, ten_out):
            self.forward_relu_outputs.append(ten_out)

        for module in self.model.features:
            if isinstance(module, nn.ReLU):
                module.register_full_backward_hook(relu_backward_hook)
                module.register_forward_hook(relu_forward_hook)

    def generate_gradients(self, input_image, target_class):
        x = input_image.detach().clone().requires_grad_(True)

        def save_grad(grad):
            self.gradients = grad
        x.register_hook(save_grad)
        output = self.model(x)
        self.model.zero_grad()
        one_hot = torch.zeros_like(output)
        one_hot[0, target_class] = 1.0
        output.backward(gradient=one_hot)
        return self.gradients[0].detach().cpu().numpy()


def explain_top_classes(image_path_tensor, class_ids):
    net = models.vgg16(weights="IMAGENET1K_V1").cuda()
    gbp = GuidedBackprop(net)
    image = image_path_tensor.unsqueeze(0).cuda()
    maps = {}
    for cls in class_ids:
        maps[cls] = gbp.generate_gradients(image, cls)
    return maps
