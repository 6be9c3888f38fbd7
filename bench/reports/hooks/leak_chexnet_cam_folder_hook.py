# Source: https://github.com/skshbjj/Lung-Diseases-detection-using-densenet-121-with-website-using-flask/blob/d81e4accf2c00033aabf82fdb5c33e331b321695/layers.py
# Report: audit of a DenseNet-121 chest X-ray (CheXNet) app: layers.py wraps the feature hook in SaveFeature, which keeps the handle and offers remove(), and ChexNet.predict() runs the forward without no_grad; this is the variant SaveFeature was written to avoid, a batch CAM loop that hooks the one shared backbone again for every X-ray and never removes the handle, while predict() records a graph each call
# Shape: a ChexNet module with a predict() method and a per-file heat-map loop; each iteration hooks net.backbone with a fresh SaveFeature store and drops the handle, so every later forward also fires all earlier hooks and each store keeps its graph-attached feature map
# Expect: TML007 line 58; TML003 line 34
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

    def predict(self, image):
        x = self.tfm(image)[None].to(self.fc.weight.device)
        probs = torch.sigmoid(self(x))  # expect: TML003
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
        handle = net.backbone.register_forward_hook(store.hook_fn)  # expect: TML007
        prob = net.predict(image)
        top = int(np.argmax(prob))
        cam = class_activation_map(store.features, net.fc.weight, top)
        np.save(os.path.join(out_dir, fname + ".npy"), cam)
        report[fname] = {DISEASES[i]: round(float(prob[i]) * 100, 2) for i in np.argsort(-prob)[:5]}
    return report


if __name__ == "__main__":
    model = ChexNet().cuda().eval()
    print(explain_folder(model, "uploads", "heatmaps"))
