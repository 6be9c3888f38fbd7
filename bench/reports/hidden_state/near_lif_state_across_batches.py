# Source: https://github.com/norse/norse/issues/130
# Report: reusing the state returned by a LIF cell as the initial state of the next call after loss.backward() crashed the next backward ("backward through the graph a second time"); maintainers: the user must detach the carried state or reset it
# Shape: the maintainer's intended use: state starts from None for every sample, is threaded through the timesteps of that sequence only, then one backward
# Expect: near-miss: must be silent
from typing import NamedTuple, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class LIFState(NamedTuple):
    v: torch.Tensor
    i: torch.Tensor


class LIFCell(nn.Module):
    def __init__(self, n_in, n_out, tau_mem=0.9, tau_syn=0.8, v_th=1.0):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out, bias=False)
        self.tau_mem, self.tau_syn, self.v_th = tau_mem, tau_syn, v_th

    def forward(self, x, state: Optional[LIFState] = None):
        if state is None:
            z = x.new_zeros(x.shape[0], self.fc.out_features)
            state = LIFState(v=z, i=z)
        i = self.tau_syn * state.i + self.fc(x)
        v = self.tau_mem * state.v + i
        spikes = torch.sigmoid(10.0 * (v - self.v_th))
        v = v - spikes * self.v_th
        return spikes, LIFState(v=v, i=i)


def train(loader, n_in=12, n_out=4, epochs=5, device="cuda"):
    cell = LIFCell(n_in, n_out).to(device)
    readout = nn.Linear(n_out, 1).to(device)
    opt = torch.optim.Adam(list(cell.parameters()) + list(readout.parameters()), lr=1e-3)
    for epoch in range(epochs):
        for frames, target in loader:  # frames: (T, B, n_in)
            frames, target = frames.to(device), target.to(device)
            state = None
            for t in range(frames.shape[0]):
                spikes, state = cell(frames[t], state)
            loss = F.mse_loss(readout(spikes), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: {loss.item():.4f}")
    return cell, readout
