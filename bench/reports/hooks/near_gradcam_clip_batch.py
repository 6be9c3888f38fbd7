# Source: https://github.com/SenuDyl/FYP-21-SoundEdge-ESC-Application/blob/d60d61f65d733786e44808ebddecc14e1f6e1ff2/backend/model/GradCAM.py
# Report: the audio backend builds one GradCAM object at start-up (hooks registered once on model.conv3[0]) and reuses it for every clip
# Shape: hooks are registered in GradCAM.__init__, which runs once before the clip loop; per clip only grad_cam(x) runs; the hooks keep detached tensors and overwrite them
# Expect: near-miss: must be silent
import glob
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class SpectroCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.conv2 = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.conv3 = nn.Sequential(nn.Conv2d(32, 64, 3, padding=1), nn.ReLU())
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, num_classes))

    def forward(self, x):
        return self.head(self.conv3(self.conv2(self.conv1(x))))


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._keep_activation)
        target_layer.register_full_backward_hook(self._keep_gradient)

    def _keep_activation(self, module, inp, out):
        self.activations = out.detach()

    def _keep_gradient(self, module, grad_in, grad_out):
        self.gradients = grad_out[0].detach()

    def __call__(self, x, class_idx=None):
        self.model.zero_grad(set_to_none=True)
        with torch.enable_grad():
            logits = self.model(x)
        if class_idx is None:
            class_idx = int(torch.argmax(logits, dim=1).item())
        logits[:, class_idx].sum().backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activations).sum(dim=1, keepdim=True))
        cam = cam - cam.min()
        return cam / (cam.max() + 1e-8), logits


def load_spectrogram(path):
    # stands in for waveform_to_model_input(): log-mel spectrogram [1, 1, F, T]
    return torch.randn(1, 1, 128, 431)


def explain_clip(path, grad_cam):
    x = load_spectrogram(path).to(DEVICE)
    cam, logits = grad_cam(x)
    probs = torch.softmax(logits, dim=1)[0]
    idx = int(torch.argmax(probs).item())
    conf = float(probs[idx].item())
    cam_np = cam.squeeze().detach().cpu().numpy()
    return idx, conf, cam_np


def explain_folder(folder, model):
    grad_cam = GradCAM(model, model.conv3[0])
    results = []
    for path in sorted(glob.glob(os.path.join(folder, "*.wav"))):
        idx, conf, cam_np = explain_clip(path, grad_cam)
        results.append({"file": os.path.basename(path), "class": idx, "confidence": conf, "cam": cam_np})
    return results


if __name__ == "__main__":
    model = SpectroCNN(num_classes=10)
    model.load_state_dict(torch.load("model/checkpoints/best.pth", map_location=DEVICE))
    model.to(DEVICE)
    model.eval()
    for row in explain_folder("test_audio", model):
        print(row["file"], row["class"], round(row["confidence"], 3))
