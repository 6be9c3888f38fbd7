# Source: https://github.com/yandexdataschool/Practical_DL/issues/43
# Report: extracting feature vectors with a pretrained CNN over 25000 images, X.append(features) ran out of CUDA memory after ~110 images; converting the features to numpy fixed it
# Shape: the truncated network is run in eval mode but with autograd on, and each attached feature tensor is appended to a list kept for the whole dataset
# Expect: TML003 line 42; TML001 line 43
import glob
import os

import numpy as np
import torch
import torch.nn as nn
from PIL import Image
from sklearn.linear_model import LogisticRegression
from torchvision import models, transforms

PREPROCESS = transforms.Compose([
    transforms.Resize(256),
    transforms.CenterCrop(224),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])


def build_embedding(device):
    backbone = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
    # everything up to the global pool: a 2048-d vector per image
    embedding = nn.Sequential(*list(backbone.children())[:-1], nn.Flatten())
    return embedding.to(device)


def label_from_path(path):
    return 1 if os.path.basename(path).startswith("dog") else 0


def extract_features(embedding, image_dir, device="cuda", limit=None):
    paths = sorted(glob.glob(os.path.join(image_dir, "*.jpg")))[:limit]
    embedding.eval()
    X, y = [], []
    for i, path in enumerate(paths):
        img = Image.open(path).convert("RGB")
        input_tensor = PREPROCESS(img).unsqueeze(0).to(device)
        # use the embedding model to produce a feature vector
        features = embedding(input_tensor)  # expect: TML003
        X.append(features)  # expect: TML001
        y.append(label_from_path(path))
        if i % 1000 == 0:
            print(f"{i}/{len(paths)} images embedded")
    X = torch.cat(X).cpu().numpy()
    return X, np.array(y)


def main(train_dir="train", val_dir="val"):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    embedding = build_embedding(device)
    X_train, y_train = extract_features(embedding, train_dir, device)
    X_val, y_val = extract_features(embedding, val_dir, device)
    clf = LogisticRegression(max_iter=2000, C=0.5)
    clf.fit(X_train, y_train)
    print(f"val accuracy: {clf.score(X_val, y_val):.4f}")
    return clf


if __name__ == "__main__":
    main()
