# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/132
# Report: re-creating the CAM object inside a loop made memory build up even after `del cam`; the hooks of each instance stayed registered on the model.
# Shape: the forward and backward hooks are registered by a helper method that the CAM constructor calls; the object is rebuilt every iteration over the same model.
# Expect: TML007 line 37
import torch
import torch.nn as nn


class GradCAM:
    def __init__(self, model: nn.Module, target_layer: nn.Module):
        self.model = model
        self.activation = None
        self.gradient = None
        self._attach(target_layer)

    def _attach(self, layer):
        layer.register_forward_hook(self._on_forward)
        layer.register_full_backward_hook(self._on_backward)

    def _on_forward(self, module, inputs, output):
        self.activation = output

    def _on_backward(self, module, grad_input, grad_output):
        self.gradient = grad_output[0]

    def __call__(self, x, labels):
        scores = self.model(x)
        self.model.zero_grad()
        scores.gather(1, labels[:, None]).sum().backward()
        weights = self.gradient.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activation).sum(dim=1)).detach().cpu()


def explain(model, layer, batches):
    results = []
    for x, labels in batches:
        cam = GradCAM(model=model, target_layer=layer)  # expect: TML007
        results.append(cam(x, labels))
        del cam
    return results
