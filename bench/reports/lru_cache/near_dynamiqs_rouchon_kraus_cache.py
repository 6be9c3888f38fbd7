# Source: https://github.com/dynamiqs/dynamiqs/pull/133
# Report: replacement for the lru_cache-on-methods proposal: a small per-instance cache(fn) wrapper that recomputes when the input tensor object changes, set up in __init__ as self.M0 = cache(lambda Hnh: ...) (source note: dynamiqs/mesolve/rouchon.py at 01ec20941975232ac038f491294c14a38af12dbc)
# Shape: the cached operators live on the solver instance (one entry, freed with it); the name `cache` is the project's own helper, not functools.cache
# Expect: near-miss: must be silent
from __future__ import annotations

from math import sqrt
from typing import Callable

import torch
from torch import Tensor


def cache(func: Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """Remember the last result, keyed on the identity of the input tensor."""
    last_in: list = [None]
    last_out: list = [None]

    def wrapper(x: Tensor) -> Tensor:
        if x is not last_in[0]:
            last_in[0] = x
            last_out[0] = func(x)
        return last_out[0]

    return wrapper


def kraus_map(rho: Tensor, operators: Tensor) -> Tensor:
    return (operators @ rho.unsqueeze(-3) @ operators.mH).sum(-3)


class MERouchon:
    def __init__(self, H, jump_ops: Tensor, dt: float, options=None):
        self.H = cache(lambda t_tensor: H(t_tensor.item()))
        self.jump_ops = jump_ops
        self.dt = dt
        self.options = options
        n = jump_ops.size(-1)
        self.I = torch.eye(n, dtype=jump_ops.dtype, device=jump_ops.device)
        self.sum_no_jump = (jump_ops.mH @ jump_ops).sum(dim=0)
        self.Hnh = cache(lambda H: H - 0.5j * self.sum_no_jump)


class MERouchon1(MERouchon):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # forward and reverse time operators, cached per instance
        self.M0 = cache(lambda Hnh: self.I - 1j * self.dt * Hnh)
        self.M1s = sqrt(self.dt) * self.jump_ops
        self.M0rev = cache(lambda Hnh: self.I + 1j * self.dt * Hnh)

    def forward(self, t: Tensor, rho: Tensor) -> Tensor:
        H = self.H(t)
        Hnh = self.Hnh(H)
        M0 = self.M0(Hnh)
        rho = kraus_map(rho, M0.unsqueeze(0)) + kraus_map(rho, self.M1s)
        return rho / rho.diagonal(dim1=-2, dim2=-1).sum(-1).real[..., None, None]

    def backward_augmented(self, t: Tensor, rho: Tensor, phi: Tensor) -> tuple[Tensor, Tensor]:
        Hnh = self.Hnh(self.H(t))
        M0 = self.M0(Hnh)
        M0rev = self.M0rev(Hnh)
        rho = kraus_map(rho, M0rev.unsqueeze(0)) - kraus_map(rho, self.M1s)
        phi = kraus_map(phi, M0.mH.unsqueeze(0)) + kraus_map(phi, self.M1s.mH)
        return rho, phi
