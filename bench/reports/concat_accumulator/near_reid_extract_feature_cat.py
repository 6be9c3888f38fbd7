# Source: https://github.com/GNAYUOHZ/ReID-MGN/blob/f0251e9e6003ec6f2c3fbc8ce5741d21436c20cf/utils/extract_feature.py
# Report: extract_feature() grows the gallery/query feature matrix with features = torch.cat((features, ff), 0) once per batch, and runs the (eval-mode) forward passes without no_grad
# Shape: the fix: the helper runs under @torch.no_grad(), keeps one normalised CPU chunk per batch in a list and concatenates once after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch
from scipy.spatial.distance import cdist


@torch.no_grad()
def extract_feature(model, loader, feat_dim=2048, device="cuda"):
    model.eval()
    chunks = []
    for inputs, _ in loader:
        ff = torch.zeros(inputs.size(0), feat_dim)
        for flip in (False, True):
            if flip:
                # horizontal flip: reverse the width axis
                rev = torch.arange(inputs.size(3) - 1, -1, -1).long()
                inputs = inputs.index_select(3, rev)
            imgs = inputs.to(device)
            outputs = model(imgs)
            # the first output of the multi-branch network is the fused embedding
            ff = ff + outputs[0].cpu()

        fnorm = torch.norm(ff, p=2, dim=1, keepdim=True)
        ff = ff.div(fnorm.expand_as(ff))
        chunks.append(ff)
    # one copy, after the loop
    return torch.cat(chunks, 0)


class ReIDEvaluator:
    def __init__(self, model, query_loader, gallery_loader, queryset, galleryset):
        self.model = model
        self.query_loader = query_loader
        self.gallery_loader = gallery_loader
        self.queryset = queryset
        self.galleryset = galleryset

    def rank1_and_map(self, dist):
        order = np.argsort(dist, axis=1)
        q_ids = np.asarray(self.queryset.ids)
        g_ids = np.asarray(self.galleryset.ids)
        matches = g_ids[order] == q_ids[:, None]
        rank1 = matches[:, 0].mean()
        aps = []
        for row in matches:
            hits = np.flatnonzero(row)
            if hits.size:
                aps.append(np.mean((np.arange(hits.size) + 1) / (hits + 1)))
        return rank1, float(np.mean(aps))

    def evaluate(self):
        print("extracting features, this may take a few minutes")
        qf = extract_feature(self.model, self.query_loader).numpy()
        gf = extract_feature(self.model, self.gallery_loader).numpy()
        rank1, m_ap = self.rank1_and_map(cdist(qf, gf))
        print(f"mAP: {m_ap:.4f} rank1: {rank1:.4f}")
        return {"mAP": m_ap, "rank1": rank1}
