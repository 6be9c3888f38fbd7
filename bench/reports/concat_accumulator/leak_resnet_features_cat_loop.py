# Source: https://github.com/pytorch/pytorch/issues/2302
# Report: extracting ResNet-152 features for ~1000 pictures exhausted 16 GB of RAM+swap after a few dozen images; the features were grown with torch.cat inside the loop while the graph of every forward pass stayed attached
# Shape: script-level loop after model.eval() without no_grad; the first forward seeds the accumulator and each later output is concatenated onto it (quadratic copy plus every iteration's graph kept through the cat history)
# Expect: TML008 line 28; TML001 line 28; TML003 line 25; TML003 line 27
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


features = extractor(as_batch(0)).flatten(1)  # expect: TML003
for index in tqdm(range(1, len(data))):
    f = extractor(as_batch(index)).flatten(1)  # expect: TML003
    features = torch.cat((features, f))  # expect: TML008, TML001

with open("pos_features.pt", "wb") as fh:
    torch.save(features, fh)
