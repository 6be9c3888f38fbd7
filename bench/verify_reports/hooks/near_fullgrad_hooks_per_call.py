# Source: https://github.com/idiap/fullgrad-saliency/issues/11
# Report: the hooks must be closed after each map.
# Shape: the same function keeps the handles and removes them before returning.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)).to(device)


def full_grad(image):
    bias_grads, handles = [], []
    for layer in model:
        if isinstance(layer, nn.Conv2d):
            handles.append(layer.register_full_backward_hook(lambda m, gin, gout: bias_grads.append(gout[0])))
    image = image.requires_grad_()
    out = model(image)
    input_grad, = torch.autograd.grad(out[0, out.argmax()], image)
    for handle in handles:
        handle.remove()
    return input_grad.abs().sum(1) + sum(g.abs().sum(1) for g in bias_grads)


for picture in range(24):
    saliency = full_grad(torch.randn(1, 3, 16, 16, device=device))
print(saliency.shape)
