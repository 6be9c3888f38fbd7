# Source: https://github.com/dynamiqs/dynamiqs/pull/129
# Report: time-dependent Kraus operators of the Rouchon solver cached with @lru_cache(maxsize=1) on methods; the class-level cache keeps self and the last (possibly grad-attached) operator tensors alive, and a no_grad run can hand a cached tensor to a grad run (issue #128, needed a clear_cache after every run_nograd)
# Shape: functools.lru_cache on solver methods that take floats and return tensors built from self.H (which may require grad)
# Expect: TML012 line 33; TML012 line 38
from __future__ import annotations

from functools import lru_cache
from math import sqrt

import torch
from torch import Tensor


def kraus_map(rho: Tensor, operators: Tensor) -> Tensor:
    return (operators @ rho.unsqueeze(-3) @ operators.mH).sum(-3)


class MERouchon:
    def __init__(self, H, jump_ops: Tensor, dt: float, options=None):
        self.H = H  # callable t -> (b_H, n, n), may hold requires_grad parameters
        self.jump_ops = jump_ops
        self.dt = dt
        self.options = options
        n = jump_ops.size(-1)
        self.I = torch.eye(n, dtype=jump_ops.dtype, device=jump_ops.device)
        self.sum_no_jump = (jump_ops.mH @ jump_ops).sum(dim=0)

    def H_nh(self, t: float) -> Tensor:
        return self.H(t) - 0.5j * self.sum_no_jump


class MERouchon1(MERouchon):
    @lru_cache(maxsize=1)  # expect: TML012
    def M0(self, t: float, dt: float) -> Tensor:
        # build time-dependent Kraus operators
        return self.I - 1j * dt * self.H_nh(t)

    @lru_cache(maxsize=1)  # expect: TML012
    def M1s(self, t: float, dt: float) -> Tensor:
        return sqrt(dt) * self.jump_ops

    def forward(self, t: float, rho: Tensor) -> Tensor:
        M0 = self.M0(t, self.dt)
        M1s = self.M1s(t, self.dt)
        rho = kraus_map(rho, M0.unsqueeze(0)) + kraus_map(rho, M1s)
        return rho / rho.diagonal(dim1=-2, dim2=-1).sum(-1).real[..., None, None]

    def backward_augmented(self, t: float, rho: Tensor, phi: Tensor) -> tuple[Tensor, Tensor]:
        M0 = self.M0(t, self.dt)
        M1s = self.M1s(t, self.dt)
        M0rev = 2 * self.I - M0
        rho = kraus_map(rho, M0rev.unsqueeze(0)) - kraus_map(rho, M1s)
        phi = kraus_map(phi, M0.mH.unsqueeze(0)) + kraus_map(phi, M1s.mH)
        return rho, phi
