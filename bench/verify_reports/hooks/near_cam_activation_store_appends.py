# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/71
# Report: the suggestion keeps a detached copy on the host.
# Shape: the same hook stores output.detach().cpu().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class ActivationsAndGradients:
    def __init__(self, model, layer):
        self.model = model
        self.activations = []
        layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, inputs, output):
        self.activations.append(output.detach().cpu())

    def __call__(self, x):
        return self.model(x)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).to(device)
cam = ActivationsAndGradients(model, model[1])
for image in range(24):
    scores = cam(torch.randn(1, 3, 16, 16, device=device))
    model.zero_grad()
    scores[0, scores.argmax()].backward()
print(len(cam.activations))
