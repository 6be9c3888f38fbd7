# Source: https://discuss.pytorch.org/t/why-extracting-features-from-pictures-is-memory-demanding/5836
# Report: extracting ResNet-152 features for 1000 pictures with `pos1 = torch.cat((pos1, f))` in the loop crashed an 8 GB machine after ~17 images; the poster solved it by storing the Variable data outside and making the input volatile (inference only).
# Shape: the extraction runs under torch.no_grad() on the CPU, per-image features go into a plain list, and a single torch.cat after the loop builds the matrix, so neither graphs nor a re-copied accumulator survive across iterations.
# Expect: near-miss: must be silent
import os

import torch
import torchvision
from torch import nn
from tqdm import tqdm

from dataset import DATASET


def extract_features(root, out_path="pos1_fea.pt", limit=1000):
    mydata = DATASET(root)
    model = torchvision.models.resnet152(weights=torchvision.models.ResNet152_Weights.DEFAULT)
    model.fc = nn.Identity()
    model.eval()

    feats = []
    with torch.no_grad():
        for index in tqdm(range(min(limit, len(mydata)))):
            img = mydata[index][0].view(1, 3, 224, 224)
            feats.append(model(img))

    pos1 = torch.cat(feats)
    with open(out_path, "wb") as fh:
        torch.save(pos1, fh)
    return pos1.shape


if __name__ == "__main__":
    print(extract_features(os.getcwd()))
