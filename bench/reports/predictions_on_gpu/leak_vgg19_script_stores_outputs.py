# Source: https://github.com/pytorch/pytorch/issues/836
# Report: a very simple script that just stored VGG outputs in a list needed over 4 GB of RAM after the model was loaded; soumith explained it was holding on to the intermediate states of the VGG graph of every forward and suggested storing `.data` (or running volatile/inference mode).
# Shape: a notebook-style module-level loop appends the raw VGG19 output of each image to a list with autograd enabled, so every stored logit tensor keeps its whole forward graph (all intermediate activations) alive.
# Expect: TML001 line 26
import glob

import torch
import torchvision.models as models
import torchvision.transforms as T
from PIL import Image

preprocess = T.Compose([
    T.Resize(256),
    T.CenterCrop(224),
    T.ToTensor(),
    T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
])

vgg19 = models.vgg19(weights=models.VGG19_Weights.IMAGENET1K_V1)
vgg19.eval()

paths = sorted(glob.glob("images/*.jpg"))
outputs = []
for path in paths:
    img = preprocess(Image.open(path).convert("RGB")).unsqueeze(0)
    outputs.append(vgg19(img))  # expect: TML001

logits = torch.cat(outputs)
top5 = logits.softmax(dim=1).topk(5, dim=1)
for path, idx, prob in zip(paths, top5.indices.tolist(), top5.values.tolist()):
    print(path, idx, [round(p, 3) for p in prob])
