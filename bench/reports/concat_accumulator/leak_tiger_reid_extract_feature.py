# Source: https://github.com/XuBai163/Amur_Tiger_Re-Identificiation/blob/2d9dc8d827bbabbb304783c6ab1f740464072e80/utils/extract_feature_vit.py
# Report: tiger re-ID evaluation extracts query/gallery embeddings (flip test-time augmentation, L2 norm) and grows the feature matrix with torch.cat((features, ff), 0) once per batch
# Shape: features is rebound to a fresh cat of the whole accumulator plus one batch inside the loader loop: every batch copies all previous rows again (quadratic copying, peak twice the matrix); the forward is wrapped in no_grad here (the repository relies on .data alone) and .data.cpu() leaves nothing on the GPU
# Expect: TML008 line 33
import numpy as np
import torch
import torch.nn as nn
from scipy.spatial.distance import cdist
from tqdm import tqdm


class ViTWithResNet(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.embed = nn.Linear(64, 2048)

    def forward(self, x):
        return self.embed(self.backbone(x))


def extract_feature(model, loader):
    features = torch.FloatTensor()
    with torch.no_grad():
        for inputs, _ in loader:
            ff = torch.FloatTensor(inputs.size(0), 2048).zero_()
            for flip in range(2):
                if flip == 1:
                    inputs = inputs.index_select(3, torch.arange(inputs.size(3) - 1, -1, -1).long())
                outputs = model(inputs.to("cuda"))
                ff = ff + outputs.data.cpu()
            ff = ff.div(torch.norm(ff, p=2, dim=1, keepdim=True).expand_as(ff))
            features = torch.cat((features, ff), 0)  # expect: TML008
    return features


class Main:
    def __init__(self, model, data):
        self.model = model.to("cuda")
        self.query_loader = data.query_loader
        self.test_loader = data.test_loader
        self.queryset = data.queryset
        self.testset = data.testset

    def evaluate(self):
        self.model.eval()
        qf = extract_feature(self.model, tqdm(self.query_loader)).numpy()
        gf = extract_feature(self.model, tqdm(self.test_loader)).numpy()
        dist = cdist(qf, gf)
        ranks = np.argsort(dist, axis=1)
        hits = np.asarray(self.testset.ids)[ranks[:, 0]] == np.asarray(self.queryset.ids)
        return float(hits.mean())
