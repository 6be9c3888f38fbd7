# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/132
# Report: the fix keeps the hook handles and removes them when the CAM object is released (a context manager), so re-creating it per iteration no longer piles hooks up.
# Shape: the CAM object is still built per iteration, but as a context manager that removes its handles on exit.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class GradCAM:
    def __init__(self, model: nn.Module, target_layer: nn.Module):
        self.model = model
        self.activation = None
        self.gradient = None
        self.handles = [
            target_layer.register_forward_hook(self._on_forward),
            target_layer.register_full_backward_hook(self._on_backward),
        ]

    def _on_forward(self, module, inputs, output):
        self.activation = output

    def _on_backward(self, module, grad_input, grad_output):
        self.gradient = grad_output[0]

    def release(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __call__(self, x, labels):
        scores = self.model(x)
        self.model.zero_grad()
        scores.gather(1, labels[:, None]).sum().backward()
        weights = self.gradient.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activation).sum(dim=1)).detach().cpu()


def explain(model, layer, batches):
    results = []
    for x, labels in batches:
        with GradCAM(model=model, target_layer=layer) as cam:
            results.append(cam(x, labels))
    return results
