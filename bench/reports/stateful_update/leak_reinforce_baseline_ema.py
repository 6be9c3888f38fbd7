# Source: https://github.com/kjenova/voxel_abstraction/blob/68c6042e8551a5815e6157f18e6e069cdf5b322f/reinforce.py
# Report: audit: the REINFORCE baseline for primitive-existence sampling is an EMA of the per-shape reward, which is built from the attached reconstruction loss; the repository takes reward.mean().item() (its comment says: to unhook it from autograd); the variant it avoided keeps the tensor, so the baseline chains every step's loss graph
# Shape: a reward-updater object whose update() rebinds self.baseline from itself and reward.mean() (attached); the train loop calls it once per primitive per batch and detaches only the advantage it uses
# Expect: TML005 line 23
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli

device = torch.device("cuda")
N_PRIMITIVES, EXISTENCE_PENALTY, MOMENTUM = 6, 8e-5, 0.9


class ReinforceRewardUpdater:
    """Keeps a moving-average baseline; returns reward minus the previous baseline."""

    def __init__(self, momentum):
        self.m = momentum
        self.baseline = 0.0

    def update(self, reward):
        advantage = reward - self.baseline
        self.baseline = self.m * self.baseline + (1 - self.m) * reward.mean()  # expect: TML005
        return advantage


class PrimitiveHead(nn.Module):
    def __init__(self, feat_dim, n_primitives):
        super().__init__()
        self.shape_params = nn.Linear(feat_dim, n_primitives * 10)
        self.exist_logit = nn.Linear(feat_dim, n_primitives)

    def forward(self, feat):
        params = self.shape_params(feat).view(feat.size(0), -1, 10)
        prob = torch.sigmoid(self.exist_logit(feat))
        dist = Bernoulli(prob)
        exist = dist.sample()
        return {"params": params, "exist": exist, "log_prob": dist.log_prob(exist)}


def reconstruction_loss(volume, out):
    # stand-in for coverage + consistency: one loss value per shape in the batch
    occupancy = torch.tanh(out["params"]).mean(-1) * out["exist"]
    return (occupancy.mean(1) - volume.flatten(1).mean(1)).pow(2)


def train(encoder, head, batches, epochs=100, lr=1e-4):
    params = list(encoder.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=lr)
    reward_updater = ReinforceRewardUpdater(MOMENTUM)
    for epoch in range(1, epochs + 1):
        encoder.train()
        head.train()
        total = 0.0
        for volume in batches:
            volume = volume.to(device)
            out = head(F.relu(encoder(volume)))
            per_shape = reconstruction_loss(volume, out)
            log_prob = out["log_prob"].clone()
            for i in range(N_PRIMITIVES):
                reward = per_shape + EXISTENCE_PENALTY * out["exist"][:, i]
                advantage = reward_updater.update(reward).detach()
                log_prob[:, i] = log_prob[:, i] * advantage
            optimizer.zero_grad()
            (log_prob.mean() + per_shape.mean()).backward()
            optimizer.step()
            total += per_shape.mean().item()
        print(f"epoch {epoch}: train loss {total / len(batches):.5f}")
