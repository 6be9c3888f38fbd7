# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/483
# Report: Creating a new CAM object inside a loop (e.g. once per loss computation) kept accumulating memory even after deleting the object, because its hooks stayed registered; the maintainer pointed to using the "with" clause.
# Shape: a small CAM helper registers forward and backward hooks when it is built, and a new one is built for every batch without ever releasing the handles.
# Expect: TML007 lines 14, 15
import torch


class SimpleGradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = None
        self.gradients = None
        self.handles = [
            target_layer.register_forward_hook(self._save_activation),  # expect: TML007
            target_layer.register_full_backward_hook(self._save_gradient),  # expect: TML007
        ]

    def _save_activation(self, module, inputs, output):
        self.activations = output

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0]

    def release(self):
        for h in self.handles:
            h.remove()

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
        cam = SimpleGradCAM(model, target_layer)
        heat = cam(x.cuda(), target_class)
        values.append(heat.mean().item())
        del cam
    return sum(values) / len(values)
