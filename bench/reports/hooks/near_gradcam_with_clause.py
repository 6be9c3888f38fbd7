# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/483
# Report: Creating a new CAM object inside a loop (e.g. once per loss computation) kept accumulating memory even after deleting the object, because its hooks stayed registered; the maintainer pointed to using the "with" clause.
# Shape: the CAM helper is a context manager whose __exit__ removes both hook handles, and the loop builds it with a "with" statement.
# Expect: near-miss: must be silent
import torch


class SimpleGradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = None
        self.gradients = None
        self.handles = [
            target_layer.register_forward_hook(self._save_activation),
            target_layer.register_full_backward_hook(self._save_gradient),
        ]

    def _save_activation(self, module, inputs, output):
        self.activations = output

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0]

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        for h in self.handles:
            h.remove()
        self.handles = []
        self.activations = self.gradients = None

    def __call__(self, x, target_class):
        logits = self.model(x)
        score = logits[:, target_class].sum()
        self.model.zero_grad()
        score.backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        cam = torch.relu((weights * self.activations).sum(dim=1))
        return cam.detach()


def cam_consistency_loss(model, target_layer, loader, target_class):
    values = []
    for x, _ in loader:
        with SimpleGradCAM(model, target_layer) as cam:
            heat = cam(x.cuda(), target_class)
        values.append(heat.mean().item())
    return sum(values) / len(values)
