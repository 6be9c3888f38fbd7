# Source: https://github.com/OwenPendrighElliott/deep_dreaming/blob/750ec3e58916c8eb2e8dc01bf88e661f52d0aa93/dreaming.py
# Report: Deep-dream script; fixed so the L2 objective is taken once after the layer-by-layer forward, with a single plain backward per ascent step and the pixel gradient reset.
# Shape: `out` is carried from layer to layer only inside one forward (re-initialised from the image each step) and consumed by one backward without retain_graph; the pixel update goes through .data, so no graph survives the step.
# Expect: near-miss: must be silent
import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import transforms

device = "cuda:0" if torch.cuda.is_available() else "cpu"

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
prep = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])

net = torchvision.models.vgg19(weights="DEFAULT").to(device)
feature_layers = list(net.features.modules())[1:]


def to_pixels(t):
    t = t.squeeze().permute(1, 2, 0).cpu()
    t = t * torch.tensor(STD) + torch.tensor(MEAN)
    return np.uint8(np.clip(t.numpy(), 0, 1) * 250)


def dream_pass(pil_img, depth, steps, step_size):
    img = prep(pil_img).unsqueeze(0).to(device)
    img.requires_grad_(True)
    net.zero_grad()
    for _ in range(steps):
        out = img
        for i in range(depth):
            out = feature_layers[i](out)
        # L2 norm of the chosen activation map is the objective
        objective = torch.linalg.norm(out)
        # gradient of the objective w.r.t. the pixels
        objective.backward()
        img.data = img.data + step_size * img.grad.data
        img.grad = None
    return to_pixels(img.data)


def octave_dream(pil_img, octaves=6, scale=1.3, depth=34, steps=5, step_size=5e-4):
    w, h = pil_img.size
    for _ in range(octaves):
        arr = dream_pass(pil_img, depth, steps, step_size)
        w, h = int(w * scale), int(h * scale)
        pil_img = Image.fromarray(arr, "RGB").resize((w, h), resample=Image.LANCZOS)
    return pil_img


if __name__ == "__main__":
    src = Image.open("inputs/clouds.jpg")
    octave_dream(src.resize((src.size[0] // 3, src.size[1] // 3))).save("outputs/clouds.jpg")
