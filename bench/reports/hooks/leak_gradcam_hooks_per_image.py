# Source: https://github.com/xtt5241/A-7/blob/a564a714f1d4264d2c6578e75e28aa6a9ac0509f/gradio/grad_cam.py
# Report: audit of a fundus-disease Grad-CAM helper: every call registers a forward and a backward hook on model.features[-1] of the one loaded model and never removes them, so each explained image adds two hooks (and closures holding activations/gradients) that run on every later forward/backward
# Shape: batch-explain script over a folder of left/right eye pairs; the helper's hook registration is inlined in the per-image loop, with the closures writing into a per-image dict
# Expect: TML007 line 56; TML007 line 57
import os

import numpy as np
import torch
import torch.nn.functional as F
import torchvision.transforms as T
from PIL import Image

from model import load_model, CLASSES

TRANSFORM = T.Compose([
    T.Resize((456, 456)),
    T.ToTensor(),
    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])


def load_pair(folder, stem, device):
    left = TRANSFORM(Image.open(os.path.join(folder, f"{stem}_left.jpg")).convert("RGB"))
    right = TRANSFORM(Image.open(os.path.join(folder, f"{stem}_right.jpg")).convert("RGB"))
    return torch.cat([left, right], dim=0).unsqueeze(0).to(device)


def cam_from(store, size):
    weights = store["grad"].mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * store["act"]).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=size, mode="bilinear", align_corners=False)
    cam = cam.squeeze().detach().cpu().numpy()
    return cam / (cam.max() + 1e-8)


def explain_folder(image_dir, out_dir, device="cuda"):
    model = load_model().to(device)
    model.eval()
    target_layer = model.features[-1]
    stems = sorted({name.rsplit("_", 1)[0] for name in os.listdir(image_dir) if name.endswith(".jpg")})
    os.makedirs(out_dir, exist_ok=True)
    for stem in stems:
        x = load_pair(image_dir, stem, device)
        with torch.no_grad():
            probs = torch.sigmoid(model(x))[0]
        class_idx = int(probs.argmax())

        store = {}

        def forward_hook(module, inputs, output):
            store["act"] = output

        def backward_hook(module, grad_in, grad_out):
            store["grad"] = grad_out[0]

        target_layer.register_forward_hook(forward_hook)  # expect: TML007
        target_layer.register_backward_hook(backward_hook)  # expect: TML007

        output = model(x)
        model.zero_grad()
        output[0, class_idx].backward()

        cam = cam_from(store, size=x.shape[-2:])
        np.save(os.path.join(out_dir, f"{stem}_{CLASSES[class_idx]}.npy"), cam)
        print(f"{stem}: {CLASSES[class_idx]} ({probs[class_idx].item():.2f})")


if __name__ == "__main__":
    explain_folder("data/fundus_test", "outputs/gradcam")
