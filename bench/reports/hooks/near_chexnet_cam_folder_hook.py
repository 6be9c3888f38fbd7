# Source: https://github.com/skshbjj/Lung-Diseases-detection-using-densenet-121-with-website-using-flask/blob/d81e4accf2c00033aabf82fdb5c33e331b321695/layers.py
# Report: audit of a DenseNet-121 chest X-ray (CheXNet) app: layers.py wraps the feature hook in SaveFeature, which keeps the handle and offers remove(); used as intended, a batch CAM loop hooks the shared backbone, reads the feature map and removes the handle within the same image, and inference runs under no_grad
# Shape: same ChexNet.predict() and per-file heat-map loop; predict() is decorated with @torch.no_grad() and each iteration's hook handle is removed right after the feature map has been read
# Expect: near-miss: must be silent
import os

import numpy as np
import torch
import torch.nn as nn
import torchvision.transforms as T
from PIL import Image
from torchvision.models import densenet121

DISEASES = ["Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia",
            "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis", "Pleural Thickening", "Hernia"]


class ChexNet(nn.Module):
    tfm = T.Compose([T.Resize((224, 224)), T.ToTensor(),
                     T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __init__(self, weights="model.h5"):
        super().__init__()
        self.backbone = densenet121(weights=None).features
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(1024, len(DISEASES))
        self.load_state_dict(torch.load(weights, map_location="cpu"))

    def forward(self, x):
        return self.fc(self.pool(self.backbone(x)).flatten(1))

    @torch.no_grad()
    def predict(self, image):
        x = self.tfm(image)[None].to(self.fc.weight.device)
        probs = torch.sigmoid(self(x))
        return probs.detach().cpu().numpy()[0]


class SaveFeature:
    def __init__(self):
        self.features = None

    def hook_fn(self, module, inputs, output):
        self.features = output


def class_activation_map(features, fc_weight, cls):
    fmap = features[0].detach().cpu()
    cam = torch.einsum("c,chw->hw", fc_weight[cls].detach().cpu(), fmap).clamp(min=0)
    return (cam / (cam.max() + 1e-8)).numpy()


def explain_folder(net, folder, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    report = {}
    for fname in sorted(os.listdir(folder)):
        image = Image.open(os.path.join(folder, fname)).convert("RGB")
        store = SaveFeature()
        handle = net.backbone.register_forward_hook(store.hook_fn)
        prob = net.predict(image)
        handle.remove()
        top = int(np.argmax(prob))
        cam = class_activation_map(store.features, net.fc.weight, top)
        np.save(os.path.join(out_dir, fname + ".npy"), cam)
        report[fname] = {DISEASES[i]: round(float(prob[i]) * 100, 2) for i in np.argsort(-prob)[:5]}
    return report


if __name__ == "__main__":
    model = ChexNet().cuda().eval()
    print(explain_folder(model, "uploads", "heatmaps"))
