# Source: https://github.com/idiap/fullgrad-saliency/issues/11
# Report: generating attribution maps repeatedly made memory grow until the process was killed; the maintainer suspected hooks that were never closed.
# Shape: the saliency method registers bias-gradient hooks on every conv layer of a persistent model each time it is called; the caller calls it once per picture.
# Expect: TML007 line 17
import torch
import torch.nn as nn


class SimpleFullGrad:
    def __init__(self, model: nn.Module):
        self.model = model
        self.bias_gradients = []

    def _register_bias_hooks(self):
        for module in self.model.modules():
            if isinstance(module, nn.Conv2d):
                module.register_forward_hook(self._save_output)  # expect: TML007

    def _save_output(self, module, inputs, output):
        output.register_hook(lambda grad: self.bias_gradients.append(grad))

    def saliency(self, image, target_class):
        self.bias_gradients = []
        self._register_bias_hooks()
        image = image.requires_grad_()
        score = self.model(image)[0, target_class]
        self.model.zero_grad()
        score.backward()
        maps = [g.abs().sum(dim=1, keepdim=True) for g in self.bias_gradients]
        return (image.grad * image).abs().sum(dim=1, keepdim=True) + sum(
            nn.functional.interpolate(m, size=image.shape[-2:]) for m in maps
        )


def attribution_maps(model, images):
    explainer = SimpleFullGrad(model)
    out = []
    for image in images:
        out.append(explainer.saliency(image.unsqueeze(0), target_class=0).detach().cpu())
    return out
