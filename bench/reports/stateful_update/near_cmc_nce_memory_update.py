# Source: https://github.com/HobbitLong/CMC/blob/7b227be0b10ef4e526c72af07664f5079ed9ee09/NCE/NCEAverage.py
# Report: audit of NCEAverage: scores are computed against .detach()ed memory rows and the momentum update of the two-view memory bank (rows mixed with the current features, renormalised, written back) runs under torch.no_grad(); this file keeps the no_grad block
# Shape: same two-view contrastive memory module; update_memory() rebinds the rows of both banks from their previous values and the batch features inside with torch.no_grad(), so the buffers never join a graph
# Expect: near-miss: must be silent
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoViewMemory(nn.Module):
    def __init__(self, feat_dim, n_data, K=4096, T=0.07, momentum=0.5):
        super().__init__()
        self.K, self.T, self.momentum = K, T, momentum
        stdv = 1.0 / math.sqrt(feat_dim / 3)
        self.register_buffer("memory_l", torch.rand(n_data, feat_dim).mul_(2 * stdv).add_(-stdv))
        self.register_buffer("memory_ab", torch.rand(n_data, feat_dim).mul_(2 * stdv).add_(-stdv))
        self.Z_l = self.Z_ab = None

    def _scores(self, bank, feat, idx):
        weight = torch.index_select(bank, 0, idx.view(-1)).detach()
        weight = weight.view(feat.size(0), self.K + 1, -1)
        return torch.exp(torch.bmm(weight, feat.unsqueeze(2)).squeeze(2) / self.T)

    def forward(self, l, ab, y):
        idx = torch.randint(0, self.memory_l.size(0), (l.size(0), self.K + 1), device=l.device)
        idx[:, 0] = y
        out_l = self._scores(self.memory_ab, l, idx)
        out_ab = self._scores(self.memory_l, ab, idx)
        if self.Z_l is None:
            self.Z_l = out_l.mean().item() * self.memory_l.size(0)
            self.Z_ab = out_ab.mean().item() * self.memory_l.size(0)
        return out_l / self.Z_l, out_ab / self.Z_ab

    def update_memory(self, l, ab, y):
        m = self.momentum
        with torch.no_grad():
            self.memory_l[y] = F.normalize(self.memory_l[y] * m + l * (1 - m), dim=1)
            self.memory_ab[y] = F.normalize(self.memory_ab[y] * m + ab * (1 - m), dim=1)


def nce_loss(x, n_data, eps=1e-7):
    K = x.size(1) - 1
    noise = K / n_data
    pos = torch.log(x[:, 0] / (x[:, 0] + noise + eps))
    neg = torch.log(noise / (x[:, 1:] + noise + eps))
    return -(pos.sum() + neg.sum()) / x.size(0)


def train_epoch(epoch, loader, model, contrast, optimizer, n_data, meters, device="cuda"):
    model.train()
    contrast.train()
    for step, (inputs, _, index) in enumerate(loader):
        inputs, index = inputs.float().to(device), index.to(device)
        feat_l, feat_ab = model(inputs)
        out_l, out_ab = contrast(feat_l, feat_ab, index)
        l_loss, ab_loss = nce_loss(out_l, n_data), nce_loss(out_ab, n_data)
        loss = l_loss + ab_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        contrast.update_memory(feat_l, feat_ab, index)
        meters["loss"].append(loss.item())
        meters["l_prob"].append(out_l[:, 0].mean().item())
        meters["ab_prob"].append(out_ab[:, 0].mean().item())
        if step % 50 == 0:
            print(f"epoch {epoch} step {step}: loss {loss.item():.3f} l_prob {meters['l_prob'][-1]:.4f}")
    return sum(meters["loss"][-len(loader):]) / len(loader)
