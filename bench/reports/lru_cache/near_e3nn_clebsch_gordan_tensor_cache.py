# Source: https://github.com/e3nn/e3nn/blob/05c20c9f292c0227720b6300cea502f275823cc4/e3nn/o3/_wigner.py
# Report: audit of e3nn's SO(3) helpers: _su2_clebsch_gordan and _so3_clebsch_gordan are decorated with functools.lru_cache(maxsize=None) and return torch tensors, so every coupling tensor ever requested stays in the cache for the life of the process (wigner_3j only hands out copies)
# Shape: fixed variant: the lru_cache'd helpers memoise only plain Python data (a tuple of (index, coefficient) entries and a float norm); wigner_3j builds a fresh tensor from them, which the layer keeps as a buffer
# Expect: near-miss: must be silent
import functools
import math

import torch
import torch.nn as nn


def _cg_coeff(j1, m1, j2, m2, j3, m3):
    if m3 != m1 + m2:
        return 0.0
    f = math.factorial
    pre = (2 * j3 + 1) * f(j3 + j1 - j2) * f(j3 - j1 + j2) * f(j1 + j2 - j3) / f(j1 + j2 + j3 + 1)
    pre *= f(j3 + m3) * f(j3 - m3) * f(j1 - m1) * f(j1 + m1) * f(j2 - m2) * f(j2 + m2)
    s = 0.0
    for k in range(0, j1 + j2 - j3 + 1):
        den = [k, j1 + j2 - j3 - k, j1 - m1 - k, j2 + m2 - k, j3 - j2 + m1 + k, j3 - j1 - m2 + k]
        if min(den) < 0:
            continue
        s += (-1) ** k / math.prod(f(d) for d in den)
    return math.sqrt(pre) * s


@functools.lru_cache(maxsize=None)
def _su2_clebsch_gordan_entries(j1: int, j2: int, j3: int) -> tuple:
    entries = []
    for m1 in range(-j1, j1 + 1):
        for m2 in range(-j2, j2 + 1):
            if abs(m1 + m2) <= j3:
                c = _cg_coeff(j1, m1, j2, m2, j3, m1 + m2)
                entries.append(((j1 + m1, j2 + m2, j3 + m1 + m2), c))
    return tuple(entries)


@functools.lru_cache(maxsize=None)
def _so3_clebsch_gordan_norm(l1: int, l2: int, l3: int) -> float:
    return math.sqrt(sum(c * c for _, c in _su2_clebsch_gordan_entries(l1, l2, l3)))


def wigner_3j(l1, l2, l3, dtype=torch.float32, device="cpu"):
    assert abs(l2 - l3) <= l1 <= l2 + l3
    C = torch.zeros((2 * l1 + 1, 2 * l2 + 1, 2 * l3 + 1), dtype=torch.float64)
    for idx, c in _su2_clebsch_gordan_entries(l1, l2, l3):
        C[idx] = c
    return (C / _so3_clebsch_gordan_norm(l1, l2, l3)).to(dtype=dtype, device=device)


class TensorProductLayer(nn.Module):
    def __init__(self, l_in, l_edge, l_out, channels):
        super().__init__()
        self.register_buffer("cg", wigner_3j(l_in, l_edge, l_out))
        self.weight = nn.Parameter(torch.randn(channels, channels) / channels ** 0.5)

    def forward(self, node_feats, edge_sh, src, dst):
        msg = torch.einsum("ijk,eci,ej->eck", self.cg, node_feats[src], edge_sh)
        out = torch.zeros(node_feats.shape[0], *msg.shape[1:], device=msg.device, dtype=msg.dtype)
        out.index_add_(0, dst, msg)
        return torch.einsum("cd,ndk->nck", self.weight, out)


def train(model, loader, epochs=100, device="cuda"):
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        running = 0.0
        for batch in loader:
            batch = batch.to(device)
            energy = model(batch)
            loss = (energy - batch.energy).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss.item()
        print(f"epoch {epoch}: energy mse {running / len(loader):.5f}")
