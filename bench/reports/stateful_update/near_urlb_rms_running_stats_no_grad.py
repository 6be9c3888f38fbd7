# Source: https://github.com/rll-research/url_benchmark/pull/32
# Report: CUDA memory kept increasing while computing the intrinsic reward with the RMS running mean/std helper; the PR adds torch.no_grad to utils.RMS to stop it.
# Shape: the PR's approach: the same self.M / self.S reassignment from a batch of graph-carrying features, but RMS.__call__ runs under @torch.no_grad(), so the running statistics never join a graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class RMS(object):
    """running mean and std"""

    def __init__(self, device, epsilon=1e-4, shape=(1,)):
        self.M = torch.zeros(shape, device=device)
        self.S = torch.ones(shape, device=device)
        self.n = epsilon

    @torch.no_grad()
    def __call__(self, x):
        bs = x.size(0)
        delta = torch.mean(x, dim=0) - self.M
        new_M = self.M + delta * bs / (self.n + bs)
        new_S = (self.S * self.n + torch.var(x, dim=0) * bs
                 + torch.square(delta) * self.n * bs / (self.n + bs)) / (self.n + bs)
        self.M = new_M
        self.S = new_S
        self.n += bs
        return self.M, self.S


class APTAgent(nn.Module):
    def __init__(self, encoder, predictor, knn_k=12, device="cuda"):
        super().__init__()
        self.encoder = encoder
        self.predictor = predictor
        self.knn_k = knn_k
        self.rms = RMS(device)

    def compute_intr_reward(self, next_obs):
        rep = self.predictor(self.encoder(next_obs))
        dist = torch.cdist(rep, rep)
        knn, _ = dist.topk(self.knn_k, dim=1, largest=False)
        _, moving_std = self.rms(knn)
        return torch.log(1.0 + (knn / moving_std).mean(dim=1, keepdim=True))
