# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/71
# Report: activations and gradients captured by the hooks were accumulated in lists on the CUDA device; the suggestion was to keep output.cpu().data.numpy() or to reset the lists for each image.
# Shape: a hook method of a helper object appends the graph-carrying layer output it sees to a list attribute never reset, while the caller loops over images.
# Expect: TML001 line 19
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
        self.activations.append(output)  # expect: TML001

    def __call__(self, x):
        return self.model(x)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5)).to(device)
cam = ActivationsAndGradients(model, model[1])
for image in range(24):
    scores = cam(torch.randn(1, 3, 16, 16, device=device))
    model.zero_grad()
    scores[0, scores.argmax()].backward()
print(len(cam.activations))
