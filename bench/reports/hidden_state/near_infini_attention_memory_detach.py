# Source: https://github.com/jlamprou/Infini-Attention/issues/3
# Report: Segment-wise Infini-Attention training demanded backward(retain_graph=True) and extra memory until the compressive memory M and normalizer z were detached in _update_memory.
# Shape: Fixed form from the maintainer: M and z carried across segments are detached when updated, and each segment's loss is backpropagated without retain_graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class InfiniAttention(nn.Module):
    def __init__(self, dim=512):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.beta = nn.Parameter(torch.zeros(1))
        self.dim = dim

    def _retrieve(self, q, M, z):
        sq = F.elu(q) + 1
        return (sq @ M) / (sq @ z.unsqueeze(-1) + 1e-6)

    def _update_memory(self, k, v, M, z):
        sk = F.elu(k) + 1
        M = (M + sk.transpose(-2, -1) @ v).detach()
        z = (z + sk.sum(dim=-2)).detach()
        return M, z

    def forward(self, x, M, z):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        local = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        mem = self._retrieve(q, M, z)
        g = torch.sigmoid(self.beta)
        M, z = self._update_memory(k, v, M, z)
        return self.out(g * mem + (1 - g) * local), M, z


def train_long_sequences(model, head, loader, opt, seg_len=2048, dim=512):
    for x, y in loader:
        x, y = x.cuda(), y.cuda()
        M = torch.zeros(x.shape[0], dim, dim, device=x.device)
        z = torch.zeros(x.shape[0], dim, device=x.device)
        for s in range(0, x.shape[1], seg_len):
            out, M, z = model(x[:, s:s + seg_len], M, z)
            loss = F.cross_entropy(head(out).flatten(0, 1), y[:, s:s + seg_len].flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
