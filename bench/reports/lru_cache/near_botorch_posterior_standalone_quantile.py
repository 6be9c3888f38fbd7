# Source: https://github.com/meta-pytorch/botorch/pull/1951
# Report: A memory leak remained in FullyBayesianPosterior when model.posterior was called in a loop, caused by a cached _quantile closure that referenced the posterior; the PR turned _quantile into a standalone uncached function.
# Shape: final state of the fix: mixture mean/variance are memoised in per-instance Optional attributes (freed with the posterior) and quantile delegates to a module-level function with no cache at all.
# Expect: near-miss: must be silent
from typing import Optional

import torch
from torch import Tensor

MCMC_DIM = -3


def _quantile(posterior: "MixturePosterior", value: Tensor) -> Tensor:
    if value.numel() > 1:
        return torch.stack([_quantile(posterior, v) for v in value], dim=0)
    if value <= 0 or value >= 1:
        raise ValueError("value is expected to be in the range (0, 1).")
    dist = torch.distributions.Normal(loc=posterior.mean, scale=posterior.variance.sqrt())
    return dist.icdf(value).mean(dim=MCMC_DIM)


class MixturePosterior:
    def __init__(self, mean: Tensor, variance: Tensor):
        self.mean = mean
        self.variance = variance
        self._mixture_mean: Optional[Tensor] = None
        self._mixture_variance: Optional[Tensor] = None

    @property
    def mixture_mean(self) -> Tensor:
        if self._mixture_mean is None:
            self._mixture_mean = self.mean.mean(dim=MCMC_DIM)
        return self._mixture_mean

    @property
    def mixture_variance(self) -> Tensor:
        if self._mixture_variance is None:
            n = self.mean.shape[MCMC_DIM]
            t1 = self.variance.sum(dim=MCMC_DIM) / n
            t2 = self.mean.pow(2).sum(dim=MCMC_DIM) / n
            t3 = -(self.mean.sum(dim=MCMC_DIM) / n).pow(2)
            self._mixture_variance = t1 + t2 + t3
        return self._mixture_variance

    def quantile(self, value: Tensor) -> Tensor:
        return _quantile(posterior=self, value=value)


def upper_quantile_gaps(model, candidate_batches, level=0.9):
    value = torch.tensor(level)
    gaps = []
    for X in candidate_batches:
        with torch.no_grad():
            mean, variance = model(X)
        posterior = MixturePosterior(mean, variance)
        gaps.append((posterior.quantile(value) - posterior.mixture_mean).max().item())
    return gaps
