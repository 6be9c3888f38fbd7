# Source: https://github.com/pytorch/pytorch/issues/2302
# Report: extracting ResNet-152 features for ~1000 pictures exhausted 16 GB of RAM+swap after a few dozen images; the features were grown with torch.cat inside the loop while the graph of every forward pass stayed attached
# Shape: fixed variant: forward passes run under no_grad, per-image features are collected in a list as CPU tensors and concatenated once after the loop
# Expect: near-miss: must be silent
import os

import torch
import torchvision
from torch import nn
from tqdm import tqdm

from dataset import PictureFolder

data = PictureFolder(os.getcwd())
backbone = torchvision.models.resnet152(pretrained=True)
extractor = nn.Sequential(*list(backbone.children())[:-1])
extractor.eval()


def as_batch(index):
    image, _ = data[index]
    return image.view(1, 3, 224, 224)


chunks = []
with torch.no_grad():
    for index in tqdm(range(len(data))):
        f = extractor(as_batch(index)).flatten(1)
        chunks.append(f.cpu())
features = torch.cat(chunks)

with open("pos_features.pt", "wb") as fh:
    torch.save(features, fh)
