# Source: https://github.com/meta-pytorch/botorch/pull/1650
# Report: BoTorch's FullyBayesianPosterior put functools.lru_cache(maxsize=None) on its mixture_mean / mixture_variance properties and its quantile method; the PR removed them because caching methods keeps instances alive and leaks memory.
# Shape: unbounded class-level caches on methods of a posterior that holds the per-MCMC-sample mean/variance tensors; a new posterior is built for every candidate batch, and each cache keeps `self` (with its tensors) plus the returned tensors alive forever.
# Expect: TML012 lines 19, 24, 32
from functools import lru_cache

import torch
from torch import Tensor

MCMC_DIM = -3


class MixturePosterior:
    def __init__(self, mean: Tensor, variance: Tensor):
        self._mean = mean
        self._variance = variance

    @property
    @lru_cache(maxsize=None)  # expect: TML012
    def mixture_mean(self) -> Tensor:
        return self._mean.mean(dim=MCMC_DIM)

    @property
    @lru_cache(maxsize=None)  # expect: TML012
    def mixture_variance(self) -> Tensor:
        n = self._mean.shape[MCMC_DIM]
        t1 = self._variance.sum(dim=MCMC_DIM) / n
        t2 = self._mean.pow(2).sum(dim=MCMC_DIM) / n
        t3 = -(self._mean.sum(dim=MCMC_DIM) / n).pow(2)
        return t1 + t2 + t3

    @lru_cache(maxsize=None)  # expect: TML012
    def quantile(self, value: Tensor) -> Tensor:
        if value <= 0 or value >= 1:
            raise ValueError("value is expected to be in the range (0, 1).")
        dist = torch.distributions.Normal(loc=self._mean, scale=self._variance.sqrt())
        return dist.icdf(value).mean(dim=MCMC_DIM)


def upper_quantile_gaps(model, candidate_batches, level=0.9):
    value = torch.tensor(level)
    gaps = []
    for X in candidate_batches:
        with torch.no_grad():
            mean, variance = model(X)  # one row per MCMC sample
        posterior = MixturePosterior(mean, variance)
        gap = posterior.quantile(value) - posterior.mixture_mean
        gaps.append(gap.max().item())
    return gaps
