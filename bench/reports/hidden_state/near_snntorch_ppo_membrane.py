# Source: https://github.com/jeshraghian/snntorch/issues/340
# Report: spiking PPO actor (Leaky neurons with init_hidden=True) crashed with "backward through the graph a second time" on the second minibatch: the membrane potential kept inside the neurons carried the previous minibatch's graph forward.
# Shape: fixed variant: neurons are stateless (init_hidden=False style); the membrane is created fresh inside each actor forward and passed explicitly, so no state outlives a minibatch.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class LeakyNeuron(nn.Module):
    """Leaky integrate-and-fire unit; the caller owns the membrane state."""

    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, cur, mem):
        reset = (mem > self.threshold).float() * self.threshold
        new_mem = self.beta * mem + cur - reset
        return torch.sigmoid(5.0 * (new_mem - self.threshold)), new_mem


class SpikingActor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=128):
        super().__init__()
        self.fc_in = nn.Linear(obs_dim, hidden)
        self.fc1 = nn.Linear(hidden, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.lif_in, self.lif1, self.lif2 = LeakyNeuron(), LeakyNeuron(), LeakyNeuron()
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs):
        cur = self.fc_in(obs)
        spk, _ = self.lif_in(cur, torch.zeros_like(cur))
        cur = self.fc1(spk)
        spk, _ = self.lif1(cur, torch.zeros_like(cur))
        cur = self.fc2(spk)
        spk, _ = self.lif2(cur, torch.zeros_like(cur))
        return Normal(self.mu(spk), self.log_std.exp())


def ppo_update(actor, critic, optimizer, rollout, clip=0.2, epochs=4, minibatch=256):
    obs, actions, old_logp, returns, adv = rollout
    n = obs.shape[0]
    for _ in range(epochs):
        perm = torch.randperm(n, device=obs.device)
        for start in range(0, n, minibatch):
            idx = perm[start:start + minibatch]
            dist = actor(obs[idx])
            logp = dist.log_prob(actions[idx]).sum(-1)
            ratio = torch.exp(logp - old_logp[idx])
            surr = torch.min(ratio * adv[idx],
                             torch.clamp(ratio, 1 - clip, 1 + clip) * adv[idx])
            value_loss = F.mse_loss(critic(obs[idx]).squeeze(-1), returns[idx])
            loss = -surr.mean() + 0.5 * value_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
