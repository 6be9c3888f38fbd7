# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/132
# Report: re-creating the CAM object inside a loop made memory build up even after `del cam`; each instance's hooks stayed registered on the model.
# Shape: the CAM constructor registers a forward hook through a helper method; the object is rebuilt for every image over the same model.
# Expect: TML007 line 19
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class GradCAM:
    def __init__(self, model, layer):
        self.model = model
        self.activation = None
        self.attach(layer)

    def attach(self, layer):
        layer.register_forward_hook(self.keep)  # expect: TML007

    def keep(self, module, inputs, output):
        self.activation = output.detach()

    def __call__(self, x):
        with torch.no_grad():
            self.model(x)
        return self.activation.mean(dim=1)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1)).to(device)
for image in range(24):
    cam = GradCAM(model, model[2])
    heatmap = cam(torch.randn(1, 3, 16, 16, device=device))
    del cam
print(heatmap.shape)
