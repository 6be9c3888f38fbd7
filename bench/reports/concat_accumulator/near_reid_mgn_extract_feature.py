# Source: https://github.com/wanyi-li/ReID-MGN/blob/2163e8bd3a4626da9499677283639dc694ac0c26/utils/extract_feature.py
# Report: fixed ReID feature extractor: per-batch embeddings go to a list, concatenated once after the loop, under no_grad
# Shape: chunks.append(emb) of detached CPU features, a single torch.cat(chunks) after the loop; no growing tensor rebinding
# Expect: near-miss: must be silent
import numpy as np
import torch
from scipy.spatial.distance import cdist


@torch.no_grad()
def gallery_features(net, loader, on_gpu=True):
    chunks = []
    for imgs, _ in loader:
        if on_gpu:
            imgs = imgs.to("cuda")
        emb = net(imgs)[0].data.cpu()
        mirrored = imgs.index_select(3, torch.arange(imgs.size(3) - 1, -1, -1, device=imgs.device))
        emb = emb + net(mirrored)[0].data.cpu()

        norm = torch.norm(emb, p=2, dim=1, keepdim=True)
        emb = emb.div(norm.expand_as(emb))
        chunks.append(emb)
    return torch.cat(chunks, 0)


class Runner:
    def __init__(self, net, query_loader, gallery_loader):
        self.net = net
        self.query_loader = query_loader
        self.gallery_loader = gallery_loader

    def evaluate(self):
        self.net.eval()
        qf = gallery_features(self.net, self.query_loader).numpy()
        gf = gallery_features(self.net, self.gallery_loader).numpy()
        dist = cdist(qf, gf)
        order = np.argsort(dist, axis=1)
        return order[:, :10]
